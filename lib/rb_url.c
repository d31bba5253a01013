/*
 * URL parsing: the forms redis-cli -u and Lettuce read (one server, seed
 * nodes, a unix socket, sentinels; `s` adds TLS). Pure, so every shape a
 * user may type is unit-tested without a server.
 *
 * Any part of a URL may be a password typed in the wrong place
 * (`redis://user:S3cret` with no @host reads as host "user", port
 * "S3cret"), so no message here quotes the URL or a piece of it: each
 * names the part that is wrong and what is expected instead.
 */
#include "fmacros.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"

#define DB_MAX 1000000

/* Private: the public header has only the name. Parts live in arrays at
 * their limits (rb_internal.h), which the parser enforces. */
typedef struct rb_url_node {
    char host[RB_URL_HOST_MAX + 1]; /* an IPv6 address without brackets */
    int port;
} rb_url_node;

struct rb_url {
    rb_url_kind kind;
    int tls;              /* rediss:// or rediss-sentinel:// */
    size_t nodes_count;   /* TCP and SENTINEL: 1..RB_URL_NODES_MAX; UNIX: 0 */
    rb_url_node nodes[RB_URL_NODES_MAX];
    char path[RB_URL_PATH_MAX + 1];     /* UNIX */
    char master[RB_URL_HOST_MAX + 1];   /* SENTINEL: the #MASTER name */
    int db;
    char user[RB_URL_USER_MAX + 1];     /* "": the default user */
    char password[RB_URL_PASSWORD_MAX + 1];
    int has_password;     /* 0: none given (`user:@` too) */
};

void rb_secret__wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;

    while (n--)
        *v++ = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Copy [s, s+n) into out (outlen bytes with the NUL), decoding %XX. */
static int copy_decoded(char *out, size_t outlen, const char *s, size_t n,
                        const char *what, rb_error *err)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        char ch = s[i];

        if (ch == '%') {
            if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
                return rb_error__set(err, RB_EINVAL,
                                     "bad %%-escape in the URL's %s "
                                     "(%%XX, two hex digits)", what);
            ch = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            if (ch == '\0')
                return rb_error__set(err, RB_EINVAL,
                                     "the URL's %s must not hold %%00", what);
            i += 2;
        }
        if (o + 1 >= outlen)
            return rb_error__set(err, RB_EINVAL,
                                 "the URL's %s is longer than %zu bytes",
                                 what, outlen - 1);
        out[o++] = ch;
    }
    out[o] = '\0';
    return RB_OK;
}

/* A decimal in [lo, hi] filling all of [s, s+n). */
static int parse_int(const char *s, size_t n, long lo, long hi, int *out)
{
    char buf[16], *end;
    long v;
    size_t i;

    if (n == 0 || n >= sizeof(buf))
        return -1;
    for (i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    v = strtol(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int host_char(char c, int bracketed)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '.')
        return 1;
    if (bracketed)
        return c == ':' || c == '%';   /* fe80::1%eth0 */
    return c == '_';
}

/* One node: host, [v6], host:port or [v6]:port in [s, s+n). */
static int parse_node(rb_url_node *node, const char *s, size_t n,
                      int default_port, rb_error *err)
{
    const char *end = s + n, *hostp = s, *hostend, *p;
    int bracketed = 0;
    size_t i, len;

    if (n == 0)
        return rb_error__set(err, RB_EINVAL,
                             "URL has an empty host (host[:port], with "
                             "',' between seed nodes)");
    if (s[0] == '[') {
        hostend = memchr(s, ']', n);
        if (hostend == NULL)
            return rb_error__set(err, RB_EINVAL,
                                 "unclosed '[' in the URL's host "
                                 "(an IPv6 address: [::1]:6379)");
        hostp = s + 1;
        p = hostend + 1;
        bracketed = 1;
    } else {
        hostend = memchr(s, ':', n);
        if (hostend == NULL)
            hostend = end;
        else if (memchr(hostend + 1, ':', (size_t)(end - hostend - 1)))
            return rb_error__set(err, RB_EINVAL,
                                 "an IPv6 address in a URL goes in "
                                 "brackets: [::1]:6379");
        p = hostend;
    }
    len = (size_t)(hostend - hostp);
    if (len == 0)
        return rb_error__set(err, RB_EINVAL, "URL has an empty host");
    if (len > RB_URL_HOST_MAX)
        return rb_error__set(err, RB_EINVAL,
                             "the URL's host is longer than %d bytes",
                             RB_URL_HOST_MAX);
    for (i = 0; i < len; i++)
        if (!host_char(hostp[i], bracketed))
            return rb_error__set(err, RB_EINVAL,
                                 "bad character in the URL's host%s",
                                 !bracketed && hostp[i] == ':'
                                     ? " (an IPv6 address goes in brackets: "
                                       "[::1]:6379)"
                                     : "");
    memcpy(node->host, hostp, len);
    node->host[len] = '\0';

    node->port = default_port;
    if (p == end)
        return RB_OK;
    if (*p != ':')
        return rb_error__set(err, RB_EINVAL,
                             "bad host in URL (after ']' only :port)");
    if (parse_int(p + 1, (size_t)(end - p - 1), 1, 65535, &node->port) != 0)
        return rb_error__set(err, RB_EINVAL,
                             "bad port in URL (1-65535; a password goes "
                             "before '@host')");
    return RB_OK;
}

static int parse_userinfo(rb_url *u, const char *s, size_t n, rb_error *err)
{
    const char *colon = memchr(s, ':', n);
    int rc;

    if (colon == NULL) {
        /* redis://secret@host: a lone userinfo is the password, as in
         * redis-cli and most clients. */
        rc = copy_decoded(u->password, sizeof(u->password), s, n, "password",
                          err);
        u->has_password = rc == RB_OK && n > 0;
        return rc;
    }
    rc = copy_decoded(u->user, sizeof(u->user), s, (size_t)(colon - s),
                      "user name", err);
    if (rc != RB_OK)
        return rc;
    /* redis://user:@host names the user and leaves the password to the
     * caller ($REDISCLI_AUTH in the CLI) rather than sending an empty one. */
    rc = copy_decoded(u->password, sizeof(u->password), colon + 1,
                      (size_t)(s + n - colon - 1), "password", err);
    u->has_password = rc == RB_OK && u->password[0] != '\0';
    return rc;
}

/* Everything after "scheme://" for the host-based schemes. */
static int parse_hosts(rb_url *u, const char *rest, int default_port,
                       rb_error *err)
{
    const char *end = rest + strlen(rest), *at = NULL, *hash = NULL;
    const char *auth, *slash, *p, *item;
    int rc;

    if (u->kind == RB_URL_SENTINEL) {
        for (p = rest; p < end; p++)
            if (*p == '#')
                hash = p;
        if (hash == NULL || hash + 1 == end)
            return rb_error__set(err, RB_EINVAL,
                                 "sentinel URL needs the master's name: "
                                 "redis-sentinel://host:26379#MASTER");
        rc = copy_decoded(u->master, sizeof(u->master), hash + 1,
                          (size_t)(end - hash - 1), "master name", err);
        if (rc != RB_OK)
            return rc;
        end = hash;
    }
    /* The userinfo ends at the last '@': nothing after it may hold one. */
    for (p = rest; p < end; p++)
        if (*p == '@')
            at = p;
    if (at) {
        rc = parse_userinfo(u, rest, (size_t)(at - rest), err);
        if (rc != RB_OK)
            return rc;
        auth = at + 1;
    } else {
        auth = rest;
    }
    for (p = auth; p < end; p++)
        if (*p == '#' || *p == '?')
            return rb_error__set(err, RB_EINVAL,
                                 *p == '#'
                                     ? "'#MASTER' belongs to "
                                       "redis-sentinel:// URLs only"
                                     : "URL takes no '?' options here "
                                       "(the database goes in /db)");
    slash = memchr(auth, '/', (size_t)(end - auth));
    if (slash == NULL)
        slash = end;

    item = auth;
    for (;;) {
        const char *comma = memchr(item, ',', (size_t)(slash - item));
        const char *stop = comma ? comma : slash;

        if (u->nodes_count == RB_URL_NODES_MAX)
            return rb_error__set(err, RB_EINVAL,
                                 "URL lists more than %d hosts",
                                 RB_URL_NODES_MAX);
        rc = parse_node(&u->nodes[u->nodes_count], item,
                        (size_t)(stop - item), default_port, err);
        if (rc != RB_OK)
            return rc;
        u->nodes_count++;
        if (comma == NULL)
            break;
        item = comma + 1;
    }

    if (slash < end && slash + 1 < end &&
        parse_int(slash + 1, (size_t)(end - slash - 1), 0, DB_MAX, &u->db))
        return rb_error__set(err, RB_EINVAL,
                             "bad database number in URL (/0 to /%d)",
                             DB_MAX);
    return RB_OK;
}

static int parse_unix(rb_url *u, const char *rest, rb_error *err)
{
    const char *q = strchr(rest, '?');
    size_t plen = q ? (size_t)(q - rest) : strlen(rest);

    if (plen == 0 || rest[0] != '/')
        return rb_error__set(err, RB_EINVAL,
                             "unix URL needs an absolute path: "
                             "unix:///path/redis.sock");
    if (plen > RB_URL_PATH_MAX)
        return rb_error__set(err, RB_EINVAL,
                             "unix socket path is longer than %d bytes",
                             RB_URL_PATH_MAX);
    memcpy(u->path, rest, plen);
    u->path[plen] = '\0';
    if (q) {
        if (strncmp(q + 1, "db=", 3) != 0)
            return rb_error__set(err, RB_EINVAL,
                                 "unix URL takes only ?db=N");
        if (parse_int(q + 4, strlen(q + 4), 0, DB_MAX, &u->db) != 0)
            return rb_error__set(err, RB_EINVAL,
                                 "bad database number in URL (?db=0 to "
                                 "?db=%d)", DB_MAX);
    }
    return RB_OK;
}

static const struct {
    const char *name;
    rb_url_kind kind;
    int tls, port;
} schemes[] = {
    { "redis", RB_URL_TCP, 0, 6379 },
    { "rediss", RB_URL_TCP, 1, 6379 },
    { "unix", RB_URL_UNIX, 0, 0 },
    { "redis-sentinel", RB_URL_SENTINEL, 0, 26379 },
    { "rediss-sentinel", RB_URL_SENTINEL, 1, 26379 },
};

static int parse_into(rb_url *out, const char *text, rb_error *err)
{
    const char *sep;
    size_t i, slen;

    if (text == NULL || text[0] == '\0')
        return rb_error__set(err, RB_EINVAL, "URL must not be empty");
    sep = strstr(text, "://");
    if (sep == NULL)
        return rb_error__set(err, RB_EINVAL,
                             "URL has no scheme (redis://host:port, "
                             "rediss://, unix:///path, redis-sentinel://)");
    slen = (size_t)(sep - text);
    for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        if (strlen(schemes[i].name) != slen ||
            strncmp(text, schemes[i].name, slen) != 0)
            continue;
        out->kind = schemes[i].kind;
        out->tls = schemes[i].tls;
        if (out->kind == RB_URL_UNIX)
            return parse_unix(out, sep + 3, err);
        return parse_hosts(out, sep + 3, schemes[i].port, err);
    }
    return rb_error__set(err, RB_EINVAL,
                         "unsupported URL scheme (use redis://, rediss://, "
                         "unix://, redis-sentinel:// or rediss-sentinel://)");
}

int rb_url_parse(rb_url **out, const char *text, rb_error *err)
{
    rb_url *u;
    int rc;

    *out = NULL;
    if ((u = calloc(1, sizeof(*u))) == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    /* A refused URL may have left part of a password behind. */
    if ((rc = parse_into(u, text, err)) != RB_OK) {
        rb_url_free(u);
        return rc;
    }
    *out = u;
    return RB_OK;
}

void rb_url_free(rb_url *url)
{
    if (url == NULL)
        return;
    rb_secret__wipe(url, sizeof(*url));
    free(url);
}

/* ---- reading and changing ----------------------------------------------- */

rb_url_kind rb_url_get_kind(const rb_url *url) { return url->kind; }
int rb_url_is_tls(const rb_url *url) { return url->tls; }
size_t rb_url_nodes_count(const rb_url *url) { return url->nodes_count; }
int rb_url_get_db(const rb_url *url) { return url->db; }
const char *rb_url_get_user(const rb_url *url) { return url->user; }
int rb_url_has_password(const rb_url *url) { return url->has_password; }

const char *rb_url_get_host(const rb_url *url, size_t i)
{
    return i < url->nodes_count ? url->nodes[i].host : NULL;
}

int rb_url_get_port(const rb_url *url, size_t i)
{
    return i < url->nodes_count ? url->nodes[i].port : 0;
}

const char *rb_url_get_path(const rb_url *url)
{
    return url->kind == RB_URL_UNIX ? url->path : NULL;
}

const char *rb_url_get_master(const rb_url *url)
{
    return url->kind == RB_URL_SENTINEL ? url->master : NULL;
}

const char *rb_url_get_password(const rb_url *url)
{
    return url->has_password ? url->password : NULL;
}

int rb_url_set_user(rb_url *url, const char *user, rb_error *err)
{
    size_t n = user ? strlen(user) : 0;

    if (n > RB_URL_USER_MAX)
        return rb_error__set(err, RB_EINVAL,
                             "user name is longer than %d bytes",
                             RB_URL_USER_MAX);
    if (n)
        memcpy(url->user, user, n);
    url->user[n] = '\0';
    return RB_OK;
}

int rb_url_set_password(rb_url *url, const char *password, rb_error *err)
{
    size_t n = password ? strlen(password) : 0;

    if (n > RB_URL_PASSWORD_MAX)
        return rb_error__set(err, RB_EINVAL,
                             "password is longer than %d bytes",
                             RB_URL_PASSWORD_MAX);
    rb_secret__wipe(url->password, sizeof(url->password));
    if (n)
        memcpy(url->password, password, n);
    url->has_password = n > 0;
    return RB_OK;
}

/* ---- formatting --------------------------------------------------------- */

typedef struct out_buf {
    char *p;
    size_t len, used;
    int overflow;
} out_buf;

static void put(out_buf *b, const char *s, size_t n)
{
    if (b->used + n >= b->len) {
        b->overflow = 1;
        return;
    }
    memcpy(b->p + b->used, s, n);
    b->used += n;
    b->p[b->used] = '\0';
}

static void puts_(out_buf *b, const char *s) { put(b, s, strlen(s)); }

/* Percent-encode everything but RFC 3986's unreserved characters. */
static void put_encoded(out_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[3];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~') {
            put(b, (const char *)&c, 1);
            continue;
        }
        esc[0] = '%';
        esc[1] = hex[c >> 4];
        esc[2] = hex[c & 15];
        put(b, esc, 3);
    }
}

int rb_url_format(char *out, size_t outlen, const rb_url *url,
                  int with_password, rb_error *err)
{
    out_buf b = { out, outlen, 0, 0 };
    char num[16];
    size_t i;

    if (outlen == 0)
        return rb_error__set(err, RB_EINVAL, "no room for a URL");
    out[0] = '\0';
    if (url->kind == RB_URL_UNIX) {
        puts_(&b, "unix://");
        puts_(&b, url->path);
        if (url->db) {
            snprintf(num, sizeof(num), "?db=%d", url->db);
            puts_(&b, num);
        }
    } else {
        puts_(&b, url->tls ? "rediss" : "redis");
        puts_(&b, url->kind == RB_URL_SENTINEL ? "-sentinel://" : "://");
        if (url->user[0] || url->has_password) {
            put_encoded(&b, url->user);
            if (url->has_password) {
                puts_(&b, ":");
                if (with_password)
                    put_encoded(&b, url->password);
                else
                    puts_(&b, "***");
            } else {
                puts_(&b, ":");   /* user:@host: password from elsewhere */
            }
            puts_(&b, "@");
        }
        for (i = 0; i < url->nodes_count; i++) {
            int v6 = strchr(url->nodes[i].host, ':') != NULL;

            if (i)
                puts_(&b, ",");
            if (v6)
                puts_(&b, "[");
            puts_(&b, url->nodes[i].host);
            if (v6)
                puts_(&b, "]");
            snprintf(num, sizeof(num), ":%d", url->nodes[i].port);
            puts_(&b, num);
        }
        if (url->db) {
            snprintf(num, sizeof(num), "/%d", url->db);
            puts_(&b, num);
        }
        if (url->kind == RB_URL_SENTINEL) {
            puts_(&b, "#");
            put_encoded(&b, url->master);
        }
    }
    if (b.overflow) {
        out[0] = '\0';
        return rb_error__set(err, RB_EINVAL, "URL is longer than %zu bytes",
                             outlen - 1);
    }
    return RB_OK;
}
