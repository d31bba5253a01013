/* --expect: the round's ids, inline or read from a file, checked once. A
 * list of 100,000 ids does not fit one argument (Linux' MAX_ARG_STRLEN is
 * 128 KiB), hence @FILE; and it is checked in O(n log n), not by comparing
 * each id with every other. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The longest list: RB_N_MAX ids of RB_NAME_MAX bytes and a separator
 * each, with room for a CR before each newline. */
#define EXPECT_FILE_MAX ((size_t)RB_N_MAX * (RB_NAME_MAX + 2))

static int read_list(const char *path, char **owned, rb_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf, *p, *q;
    size_t len;

    if (f == NULL)
        return cli_error(err, "--expect @%s: %s", path, strerror(errno));
    buf = malloc(EXPECT_FILE_MAX + 2);
    if (buf == NULL) {
        fclose(f);
        return cli_error(err, "--expect @%s: out of memory", path);
    }
    len = fread(buf, 1, EXPECT_FILE_MAX + 1, f);
    if (ferror(f) || len > EXPECT_FILE_MAX) {
        int e = ferror(f) ? errno : 0;

        fclose(f);
        free(buf);
        return e ? cli_error(err, "--expect @%s: %s", path, strerror(e))
                 : cli_error(err, "--expect @%s: more than %zu bytes", path,
                             EXPECT_FILE_MAX);
    }
    fclose(f);
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        free(buf);
        return cli_error(err, "--expect @%s: a NUL byte", path);
    }
    /* Ids one a line (or separated by commas or blanks) become the
     * comma-separated list the round's terms name. */
    for (p = buf, q = buf; *p; ) {
        size_t l = strcspn(p, ", \t\r\n");

        if (l && q != buf)
            *q++ = ',';
        memmove(q, p, l);
        q += l;
        p += l;
        p += strspn(p, ", \t\r\n");
    }
    *q = '\0';
    *owned = buf;
    return RB_OK;
}

typedef struct span {
    const char *p;
    size_t len;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);

    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Each id well formed and listed once: a round of n counts n distinct
 * ids. */
static int check_list(const char *text, long *count, rb_error *err)
{
    span *ids;
    const char *p = text;
    char id[RB_NAME_MAX + 1];
    long i, n = 0;

    if (text[0] == '\0')
        return cli_error(err, "--expect must not be empty");
    ids = malloc(sizeof(*ids) * ((size_t)RB_N_MAX + 1));
    if (ids == NULL)
        return cli_error(err, "--expect: out of memory");
    while (*p) {
        size_t l = strcspn(p, ",");

        if (l == 0 || l > RB_NAME_MAX) {
            free(ids);
            return cli_error(err, "--expect: ids must be 1..%d bytes, "
                             "separated by single commas", RB_NAME_MAX);
        }
        memcpy(id, p, l);
        id[l] = '\0';
        if (rb_check_id(id, "--expect id", err) != RB_OK) {
            free(ids);
            return RB_EINVAL;
        }
        if (n == RB_N_MAX) {
            free(ids);
            return cli_error(err, "--expect lists more than %d ids",
                             RB_N_MAX);
        }
        ids[n].p = p;
        ids[n++].len = l;
        p += l;
        if (*p == ',' && *++p == '\0') {
            free(ids);
            return cli_error(err, "--expect must not end with ','");
        }
    }
    qsort(ids, (size_t)n, sizeof(*ids), span_cmp);
    for (i = 1; i < n; i++)
        if (span_cmp(&ids[i - 1], &ids[i]) == 0) {
            cli_error(err, "--expect lists '%.*s' twice", (int)ids[i].len,
                      ids[i].p);
            free(ids);
            return RB_EINVAL;
        }
    free(ids);
    *count = n;
    return RB_OK;
}

int cli_parse_expect(const char *arg, const char **list, char **owned,
                     long *count, rb_error *err)
{
    *owned = NULL;
    *list = arg;
    if (arg[0] == '@') {
        if (read_list(arg + 1, owned, err) != RB_OK)
            return RB_EINVAL;
        *list = *owned;
    }
    if (check_list(*list, count, err) != RB_OK) {
        free(*owned);
        *owned = NULL;
        return RB_EINVAL;
    }
    return RB_OK;
}
