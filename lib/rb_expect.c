/*
 * An --expect list cut into the parts it is stored in, and its digest
 * (lua/includes/expect.lua): pure, no I/O.
 */
#include "fmacros.h"

#include <stdlib.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_sha1.h"

/* The end of the part that starts at from: the comma before the id that
 * does not fit, or the list's end. */
static const char *part_end(const char *from)
{
    const char *id = from, *end;
    int ids = 0;

    for (;;) {
        end = id + strcspn(id, ",");
        if (ids > 0 && (ids == RB_EXPECT_PART_IDS ||
                        end - from > RB_EXPECT_PART_BYTES))
            return id - 1;
        ids++;
        if (*end == '\0')
            return end;
        id = end + 1;
    }
}

int rb_expect__cut(const char *list, rb_expect_parts *p)
{
    const char *from = list;

    p->count = 0;
    for (;;) {
        const char *end = part_end(from);

        if (p->count == RB_EXPECT_PARTS_MAX ||
            end - from > RB_EXPECT_PART_BYTES)
            return -1;
        p->start[p->count] = from;
        rb_sha1_hex(from, (size_t)(end - from), p->sums + 40 * p->count++);
        /* A comma that ends the list (accepted, as in "a,b,") starts no
         * part of its own: an empty part is no part. */
        if (*end == '\0' || end[1] == '\0') {
            p->start[p->count] = end + 1;   /* as if a comma followed */
            return 0;
        }
        from = end + 1;
    }
}

void rb_barrier__expect_digest(const char *list, char hex[41])
{
    rb_expect_parts *p = malloc(sizeof(*p));

    hex[0] = '\0';   /* none that a server accepts */
    if (p && rb_expect__cut(list, p) == 0)
        rb_sha1_hex(p->sums, 40 * (size_t)p->count, hex);
    free(p);
}

