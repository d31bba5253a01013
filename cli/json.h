#ifndef RB_CLI_JSON_H
#define RB_CLI_JSON_H

/*
 * A small JSON writer for --json (RFC 8259). An object is built in memory
 * and written with one write(2), one object per line, so that outputs of
 * several processes sharing a pipe or a log never interleave. Strings are
 * escaped whatever they hold: control characters as \uXXXX, invalid UTF-8
 * as U+FFFD. A number that is not in JSON's canonical form (007, 1., +3)
 * goes out as a string, never as text a parser would refuse.
 *
 * Building never fails visibly: after an allocation failure the writer
 * keeps going as a no-op and cli_json_write reports it. Every builder
 * takes j == NULL as a no-op, so a command can add its fields to
 * cli_out_json() whether or not --json was given.
 */

#include <stddef.h>

typedef struct cli_json {
    char *buf;
    size_t len, cap;
    int need_comma;   /* a value was written at this level */
    int depth;
    char stack[16];   /* closers of the open containers */
    int oom;
} cli_json;

/* Start an object: "{". */
void cli_json_open(cli_json *j);

/* The key of the next value in the current object. */
void cli_json_key(cli_json *j, const char *key);

/* Values: after cli_json_key in an object, or as array elements. */
void cli_json_str(cli_json *j, const char *s);       /* NULL: null */
void cli_json_strn(cli_json *j, const char *s, size_t len);
void cli_json_int(cli_json *j, long long v);
void cli_json_bool(cli_json *j, int v);
void cli_json_null(cli_json *j);
/* A number given as text (a Redis value): a JSON number when the text is
 * one in canonical form, else a string. */
void cli_json_num(cli_json *j, const char *text);

/* Nested containers (as values). */
void cli_json_begin_obj(cli_json *j);
void cli_json_end_obj(cli_json *j);
void cli_json_begin_arr(cli_json *j);
void cli_json_end_arr(cli_json *j);

/* Shorthands: key and value in one call. */
void cli_json_kstr(cli_json *j, const char *key, const char *s);
void cli_json_kint(cli_json *j, const char *key, long long v);
void cli_json_knum(cli_json *j, const char *key, const char *text);
void cli_json_kbool(cli_json *j, const char *key, int v);

/* Close every open container, add "\n", write it to fd with one write(2)
 * (continued only if the kernel takes part of it) and free the buffer.
 * @return 0, or -1 (out of memory, or the write failed) */
int cli_json_write(cli_json *j, int fd);

/* Free without writing. */
void cli_json_free(cli_json *j);

/* 1 when text is a JSON number in canonical form: -?(0|[1-9][0-9]*)
 * (\.[0-9]+)?([eE][+-]?[0-9]+)? */
int cli_json_is_number(const char *text);

/* Append s to buf escaped for a one-line terminal message: control bytes
 * and DEL as \xHH (\n, \t, \r as themselves escaped), so an echoed argument
 * can neither break the line nor move the cursor. Returns the length the
 * full result needs (as snprintf); buf is always NUL-terminated when
 * len > 0. */
size_t cli_escape(char *buf, size_t len, const char *s);

#endif
