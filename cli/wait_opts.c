/* wait.h: the library's wait options from the CLI's spec. The library's
 * option fields change units and grow (a version field, milliseconds, the
 * round's reduction); only this function follows them. */
#include "wait.h"

void cli_wait_opts_fill(rb_wait_opts *o, const cli_wait_spec *w)
{
    rb_wait_opts init = RB_WAIT_OPTS_INIT;

    *o = init;
    o->prefix = w->prefix;
    o->name = w->name;
    o->n = w->n;
    o->id = w->id;
    o->expect = w->expect;
    o->value = w->value;
    o->reduce = w->value ? w->reduce : NULL;
    o->timeout_ms = w->timeout_ms;
    o->lease_ms = w->lease_ms;
    o->ttl_ms = w->ttl_ms;
    o->once = w->once;
    o->once_payload = w->once_payload;
    o->once_held = w->once_held;
    o->progress = w->progress;
    o->payload = w->progress_payload;
    o->progress_ms = w->progress_ms;
    o->job = w->job;
    o->job_epoch = w->job_epoch;
    o->job_attempt = w->job_attempt;
}
