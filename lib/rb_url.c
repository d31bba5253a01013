/*
 * URL parsing: redis://[user[:password]@]host[:port][/db] and
 * unix:///path[?db=N], as redis-cli -u reads them. Pure, so every shape
 * a user may type is unit-tested without a server.
 */
#include "fmacros.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Copy [s, s+n) into out, decoding %XX. */
static int copy_decoded(char *out, size_t outlen, const char *s, size_t n,
                        const char *what, rb_error *err)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        char ch = s[i];

        if (ch == '%') {
            if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
                return rb_error__set(err, RB_EINVAL,
                                     "bad %%-escape in URL %s", what);
            ch = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        }
        if (o + 1 >= outlen)
            return rb_error__set(err, RB_EINVAL, "URL %s is too long", what);
        out[o++] = ch;
    }
    out[o] = '\0';
    return RB_OK;
}

static int parse_int(const char *s, size_t n, long lo, long hi, long *out)
{
    char buf[16], *end;
    long v;

    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (buf[0] < '0' || buf[0] > '9')
        return -1;
    errno = 0;
    v = strtol(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_unix(rb_url *u, const char *rest, rb_error *err)
{
    const char *q = strchr(rest, '?');
    size_t plen = q ? (size_t)(q - rest) : strlen(rest);
    long db;

    u->is_unix = 1;
    if (plen == 0 || rest[0] != '/')
        return rb_error__set(err, RB_EINVAL,
                             "unix URL needs an absolute path: "
                             "unix:///path/redis.sock");
    if (plen >= sizeof(u->path))
        return rb_error__set(err, RB_EINVAL,
                             "unix socket path is longer than %zu bytes",
                             sizeof(u->path) - 1);
    memcpy(u->path, rest, plen);
    u->path[plen] = '\0';
    if (q) {
        if (strncmp(q + 1, "db=", 3) != 0)
            return rb_error__set(err, RB_EINVAL,
                                 "unix URL takes only ?db=N, not '%s'", q + 1);
        if (parse_int(q + 4, strlen(q + 4), 0, 1000000, &db) != 0)
            return rb_error__set(err, RB_EINVAL,
                                 "bad database number '%s' in URL", q + 4);
        u->db = (int)db;
    }
    return RB_OK;
}

static int parse_tcp(rb_url *u, const char *rest, rb_error *err)
{
    const char *at = NULL, *p, *hostp, *hostend, *slash;
    long v;
    int rc;

    /* The userinfo ends at the last '@' before the path: passwords may
     * hold '@' only when escaped, but be lenient about the path part. */
    slash = strchr(rest, '/');
    for (p = rest; *p && (slash == NULL || p < slash); p++)
        if (*p == '@')
            at = p;
    if (at) {
        const char *colon = memchr(rest, ':', (size_t)(at - rest));

        if (colon) {
            rc = copy_decoded(u->user, sizeof(u->user), rest,
                              (size_t)(colon - rest), "user", err);
            if (rc) return rc;
            rc = copy_decoded(u->password, sizeof(u->password), colon + 1,
                              (size_t)(at - colon - 1), "password", err);
            if (rc) return rc;
            u->has_password = 1;
        } else {
            /* redis://secret@host: a lone userinfo is the password, as in
             * redis-cli and most clients. */
            rc = copy_decoded(u->password, sizeof(u->password), rest,
                              (size_t)(at - rest), "password", err);
            if (rc) return rc;
            u->has_password = 1;
        }
        hostp = at + 1;
    } else {
        hostp = rest;
    }

    hostend = slash ? slash : hostp + strlen(hostp);
    if (hostp[0] == '[') {
        const char *close = memchr(hostp, ']', (size_t)(hostend - hostp));

        if (close == NULL)
            return rb_error__set(err, RB_EINVAL, "unclosed '[' in URL host");
        if ((size_t)(close - hostp - 1) >= sizeof(u->host))
            return rb_error__set(err, RB_EINVAL, "URL host is too long");
        memcpy(u->host, hostp + 1, (size_t)(close - hostp - 1));
        u->host[close - hostp - 1] = '\0';
        p = close + 1;
    } else {
        p = memchr(hostp, ':', (size_t)(hostend - hostp));
        if (p == NULL)
            p = hostend;
        if ((size_t)(p - hostp) >= sizeof(u->host))
            return rb_error__set(err, RB_EINVAL, "URL host is too long");
        memcpy(u->host, hostp, (size_t)(p - hostp));
        u->host[p - hostp] = '\0';
    }
    if (u->host[0] == '\0')
        return rb_error__set(err, RB_EINVAL, "URL has no host");

    if (p < hostend && *p == ':') {
        if (parse_int(p + 1, (size_t)(hostend - p - 1), 1, 65535, &v) != 0)
            return rb_error__set(err, RB_EINVAL,
                                 "bad port '%.*s' in URL (1-65535)",
                                 (int)(hostend - p - 1), p + 1);
        u->port = (int)v;
    } else if (p != hostend) {
        return rb_error__set(err, RB_EINVAL, "bad host in URL");
    }

    if (slash && slash[1] != '\0') {
        if (parse_int(slash + 1, strlen(slash + 1), 0, 1000000, &v) != 0)
            return rb_error__set(err, RB_EINVAL,
                                 "bad database number '%s' in URL",
                                 slash + 1);
        u->db = (int)v;
    }
    return RB_OK;
}

int rb_url_parse(rb_url *out, const char *text, rb_error *err)
{
    const char *sep;

    memset(out, 0, sizeof(*out));
    out->port = 6379;
    if (text == NULL || text[0] == '\0')
        return rb_error__set(err, RB_EINVAL, "URL must not be empty");
    sep = strstr(text, "://");
    if (sep == NULL)
        return rb_error__set(err, RB_EINVAL,
                             "URL '%s' has no scheme (use redis://host:port "
                             "or unix:///path)", text);
    if ((size_t)(sep - text) == 5 && strncmp(text, "redis", 5) == 0)
        return parse_tcp(out, sep + 3, err);
    if ((size_t)(sep - text) == 4 && strncmp(text, "unix", 4) == 0)
        return parse_unix(out, sep + 3, err);
    return rb_error__set(err, RB_EINVAL,
                         "unsupported URL scheme '%.*s' (use redis:// or "
                         "unix://)", (int)(sep - text), text);
}
