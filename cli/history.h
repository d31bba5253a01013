#ifndef RB_CLI_HISTORY_H
#define RB_CLI_HISTORY_H

/* A name's history turned into rounds and parties, once, for report,
 * trace, plot and metrics (history.c). Only the barrier's own rounds (not
 * those of barriers inside a job) are rounds here. */

#include "cli.h"

typedef struct hist_arrival {
    size_t party;           /* index into parties */
    long long ms;
} hist_arrival;

typedef struct hist_round {
    long long g;
    long long n;
    long long start, end;   /* first arrival; release or break (0: open) */
    int passed;
    const char *cause, *reason;   /* of a break (borrowed from the events) */
    size_t a0, na;          /* its arrivals: arr[a0 .. a0+na) */
    size_t last;            /* index into parties of the last arrival */
} hist_round;

typedef struct hist_party {
    const char *id;         /* borrowed */
    size_t rounds, last;    /* rounds seen; times it arrived last */
    long long *late;        /* ms after each round's first arrival */
    long long *wait;        /* ms from its arrival to the round's end */
    size_t nlate, nwait;
} hist_party;

/* A lock's holder: each grant's hold (grant to release or expiry, -1
 * while held) and wait (in line to grant; 0 granted at once). */
typedef struct hist_hold {
    const char *id;         /* borrowed */
    long long token, granted, ended, wait_ms;
    const char *how;        /* "release", "expire", "reset", NULL held */
} hist_hold;

/* A job's attempt: from its first entry to its end. */
typedef struct hist_attempt {
    long long epoch, att, start, end;   /* end 0: not ended */
    int done, restarted;
    const char *cause, *reason;         /* of its break (borrowed) */
} hist_attempt;

typedef struct hist_view {
    rb_history h;
    hist_round *rounds;     /* ended rounds, oldest first */
    size_t nrounds;
    hist_arrival *arr;
    size_t narr;
    hist_party *parties;    /* in id order (w2 before w10) */
    size_t nparties;
    long long t0, t1;       /* first and last event of the kept rounds */
    hist_hold *holds;       /* lock grants, oldest first */
    size_t nholds;
    hist_attempt *attempts; /* job attempts, oldest first */
    size_t nattempts;
} hist_view;

/* Connect as common says, read the history of name and build the view of
 * its last `last` ended rounds (0: all kept). Returns -1 to go on, or the
 * exit code after saying why not. */
int hist_load(hist_view *v, const cli_common *common, const char *name,
              long last, cli_config *cfg);
void hist_free(hist_view *v);

/* The start of report, trace and plot: parse --name NAME, --last K
 * (last_help its help) and the common flags, then hist_load. Returns -1
 * to go on (*name set, its "name" in --json), or the exit code after
 * saying why not; the caller frees v and cfg either way. */
int hist_open_cmd(int argc, char **argv, const char *about,
                  const char *last_help, hist_view *v, cli_config *cfg,
                  const char **name);

/* Build the view from v->h (read already): its last `last` ended rounds
 * (0: all), lock grants and job attempts. 0, or -1 out of memory. */
int hist_build(hist_view *v, long last);

/* Fill v->holds and v->attempts from v->h (history_jobs.c): 0, or -1
 * out of memory. */
int hist_jobs_locks(hist_view *v);

/* The pct-th percentile (nearest rank) of xs[0..n), sorting xs; 0 when
 * n is 0. */
long long hist_pct(long long *xs, size_t n, int pct);

/* The value of counter field in the history (0 when absent). */
long long hist_counter(const hist_view *v, const char *field);

#endif
