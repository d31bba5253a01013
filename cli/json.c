/* JSON objects for --json, and escaping of anything echoed. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

static void put(cli_json *j, const char *s, size_t n)
{
    if (j == NULL || j->oom)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        char *p;

        while (cap < j->len + n + 1)
            cap *= 2;
        p = realloc(j->buf, cap);
        if (p == NULL) {
            j->oom = 1;
            return;
        }
        j->buf = p;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(cli_json *j, const char *s)
{
    put(j, s, strlen(s));
}

/* Before a value: a comma unless it is the first at its level. */
static void sep(cli_json *j)
{
    if (j == NULL)
        return;
    if (j->need_comma)
        put(j, ",", 1);
    j->need_comma = 1;
}

void cli_json_open(cli_json *j)
{
    memset(j, 0, sizeof(*j));
    cli_json_begin_obj(j);
}

void cli_json_key(cli_json *j, const char *key)
{
    if (j == NULL)
        return;
    sep(j);
    j->need_comma = 0;
    cli_json_str(j, key);
    put(j, ":", 1);
    j->need_comma = 0;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one: overlong forms, surrogates and code points past
 * U+10FFFF are refused as RFC 3629 says. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len, i;
    unsigned int cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

void cli_json_strn(cli_json *j, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run;
    char esc[8];

    if (j == NULL)
        return;
    sep(j);
    put(j, "\"", 1);
    while (i < n) {
        unsigned char ch = p[i];

        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            put(j, esc, 2);
            i++;
        } else if (ch == '\n') {
            puts_(j, "\\n");
            i++;
        } else if (ch == '\t') {
            puts_(j, "\\t");
            i++;
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", ch);
            puts_(j, esc);
            i++;
        } else if (ch < 0x80) {
            /* A run of plain ASCII in one append. */
            for (run = i; run < n && p[run] >= 0x20 && p[run] < 0x7f &&
                          p[run] != '"' && p[run] != '\\'; run++)
                ;
            put(j, s + i, run - i);
            i = run;
        } else if ((run = utf8_len(p + i, n - i)) > 0) {
            put(j, s + i, run);
            i += run;
        } else {
            puts_(j, "\\ufffd");
            i++;
        }
    }
    put(j, "\"", 1);
}

void cli_json_str(cli_json *j, const char *s)
{
    if (s == NULL)
        cli_json_null(j);
    else
        cli_json_strn(j, s, strlen(s));
}

void cli_json_int(cli_json *j, long long v)
{
    char num[24];

    sep(j);
    snprintf(num, sizeof(num), "%lld", v);
    puts_(j, num);
}

void cli_json_bool(cli_json *j, int v)
{
    sep(j);
    puts_(j, v ? "true" : "false");
}

void cli_json_null(cli_json *j)
{
    sep(j);
    puts_(j, "null");
}

static const char *digits(const char *p)
{
    while (*p >= '0' && *p <= '9')
        p++;
    return p;
}

int cli_json_is_number(const char *text)
{
    const char *p = text, *q;

    if (p == NULL)
        return 0;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p = digits(p);
    else
        return 0;
    if (*p == '.') {
        q = digits(p + 1);
        if (q == p + 1)
            return 0;
        p = q;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        q = digits(p);
        if (q == p)
            return 0;
        p = q;
    }
    return *p == '\0';
}

void cli_json_num(cli_json *j, const char *text)
{
    if (!cli_json_is_number(text)) {
        cli_json_str(j, text);
        return;
    }
    sep(j);
    puts_(j, text);
}

/* Nesting deeper than the stack is a bug in the caller; it shows as
 * invalid output in its tests rather than as a crash. */
static void push(cli_json *j, char closer)
{
    if (j == NULL)
        return;
    if ((size_t)j->depth < sizeof(j->stack))
        j->stack[j->depth] = closer;
    j->depth++;
    j->need_comma = 0;
}

void cli_json_begin_obj(cli_json *j)
{
    sep(j);
    put(j, "{", 1);
    push(j, '}');
}

static void pop(cli_json *j)
{
    if (j == NULL)
        return;
    if (j->depth > 0) {
        j->depth--;
        if ((size_t)j->depth < sizeof(j->stack))
            put(j, &j->stack[j->depth], 1);
    }
    j->need_comma = 1;
}

void cli_json_end_obj(cli_json *j)
{
    pop(j);
}

void cli_json_begin_arr(cli_json *j)
{
    sep(j);
    put(j, "[", 1);
    push(j, ']');
}

void cli_json_end_arr(cli_json *j)
{
    pop(j);
}

void cli_json_kstr(cli_json *j, const char *key, const char *s)
{
    cli_json_key(j, key);
    cli_json_str(j, s);
}

void cli_json_kint(cli_json *j, const char *key, long long v)
{
    cli_json_key(j, key);
    cli_json_int(j, v);
}

void cli_json_knum(cli_json *j, const char *key, const char *text)
{
    cli_json_key(j, key);
    cli_json_num(j, text);
}

void cli_json_kbool(cli_json *j, const char *key, int v)
{
    cli_json_key(j, key);
    cli_json_bool(j, v);
}

void cli_json_free(cli_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof(*j));
}

int cli_json_write(cli_json *j, int fd)
{
    size_t off = 0;
    ssize_t w;
    int rc = 0;

    while (j->depth > 0)
        pop(j);
    put(j, "\n", 1);
    if (j->oom) {
        cli_json_free(j);
        errno = ENOMEM;
        return -1;
    }
    while (off < j->len) {
        w = write(fd, j->buf + off, j->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    cli_json_free(j);
    return rc;
}

size_t cli_escape(char *buf, size_t len, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t need = 0, n = strlen(s), i = 0, k;
    char esc[8];

    while (i < n) {
        size_t m = 1, ulen = utf8_len(p + i, n - i);
        const char *piece = s + i;

        if (p[i] == '\n' || p[i] == '\t' || p[i] == '\r') {
            snprintf(esc, sizeof(esc), "\\%c",
                     p[i] == '\n' ? 'n' : p[i] == '\t' ? 't' : 'r');
            piece = esc;
        } else if (p[i] < 0x20 || p[i] == 0x7f || ulen == 0 ||
                   (ulen == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)) {
            /* C0, DEL, C1 (U+0080..U+009F) and bytes that are not UTF-8:
             * none of them may reach a terminal raw. */
            if (ulen == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) {
                snprintf(esc, sizeof(esc), "\\u%04x", p[i + 1]);
                i++;
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
            }
            piece = esc;
        } else {
            m = ulen;
        }
        if (piece == esc)
            m = strlen(esc);
        for (k = 0; k < m; k++, need++)
            if (need + 1 < len)
                buf[need] = piece[k];
        i += piece == esc ? 1 : m;
    }
    if (len > 0)
        buf[need < len ? need : len - 1] = '\0';
    return need;
}
