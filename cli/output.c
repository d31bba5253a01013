/* What a user sees: messages on stderr ("rbarrier: <what>", one write(2)
 * per line, control characters escaped), the --json object on stdout, and
 * the check that what went to stdout got there (a lost result is exit 1). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The --json object of this command run: open from cli_parse on, written
 * once by cli_done. */
static cli_json out_json;
static int out_json_on, out_json_done;

void cli_json_enable(void)
{
    if (out_json_on)
        return;
    out_json_on = 1;
    cli_json_open(&out_json);
}

cli_json *cli_out_json(void)
{
    return out_json_on && !out_json_done ? &out_json : NULL;
}

int cli_error(rb_error *err, const char *fmt, ...)
{
    va_list ap;

    err->code = RB_EINVAL;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return RB_EINVAL;
}

int cli_exit_code(int rc, int signal_number)
{
    switch (rc) {
    case RB_OK: return CLI_EXIT_OK;
    case RB_EINVAL: return CLI_EXIT_USAGE;
    case RB_EBROKEN: return CLI_EXIT_BROKEN;
    case RB_EUNREACHABLE: return CLI_EXIT_UNREACHABLE;
    case RB_ETIMEOUT: return CLI_EXIT_TIMEOUT;
    case RB_ECANCELED: return 128 + (signal_number ? signal_number : SIGINT);
    case RB_ELOST:
        /* Exit 1 as any Redis error, but --json says what it was. */
        cli_verdict("lost");
        return CLI_EXIT_REDIS;
    default: return CLI_EXIT_REDIS;
    }
}

/* Set by a command whose exit status is not rbarrier's own (a command's
 * status under lock, run or --once): the word cli_done reports instead of
 * the one the code would give. */
static const char *verdict;

void cli_verdict(const char *word)
{
    verdict = word;
}

const char *cli_outcome(int code)
{
    if (verdict)
        return verdict;
    switch (code) {
    case CLI_EXIT_OK: return "ok";
    case CLI_EXIT_REDIS: return "error";
    case CLI_EXIT_BROKEN: return "broken";
    case CLI_EXIT_TIMEOUT: return "timeout";
    default: return code > 128 ? "interrupted" : "error";
    }
}

int cli_done(int code, const char *reason)
{
    cli_json *j = cli_out_json();

    if (j == NULL)
        return code;
    cli_json_kstr(j, "outcome", cli_outcome(code));
    if (code != CLI_EXIT_OK || (verdict && strcmp(verdict, "ok") != 0))
        cli_json_kstr(j, "reason", reason ? reason : cli_outcome(code));
    cli_json_kint(j, "exit", code);
    if (fflush(stdout) != 0)
        cli_stdout_failed(errno);
    if (cli_json_write(j, STDOUT_FILENO) != 0)
        cli_stdout_failed(errno);
    out_json_done = 1;
    return code;
}

/* The first failed write to stdout (0: none). */
static int stdout_errno;

void cli_stdout_failed(int e)
{
    if (stdout_errno == 0)
        stdout_errno = e ? e : EIO;
}

void cli_std_fds(void)
{
    int fd;

    /* A closed 0, 1 or 2 would be taken by the first socket we open, and
     * a result printed into Redis. Occupy it with /dev/null opened so that
     * using it fails as it would have: writing to stdout still reports an
     * error. */
    for (fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);

            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
}

int cli_finish(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_stdout_failed(errno);
    if (stdout_errno == 0)
        return code;
    /* As coreutils: output lost is a failure, said once on stderr. */
    cli_message("cannot write to stdout: %s",
                strerror(stdout_errno));
    return code == CLI_EXIT_OK ? CLI_EXIT_REDIS : code;
}

void cli_message(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_say(msg);
}

void cli_say(const char *msg)
{
    size_t need = cli_escape(NULL, 0, msg) + sizeof("rbarrier: \n");
    char stack[2048], *line = need <= sizeof(stack) ? stack : malloc(need);
    size_t off = 0, len;
    ssize_t w;

    if (line == NULL)
        return;
    /* One line, one write(2): lines of parties sharing a log never mix. */
    memcpy(line, "rbarrier: ", 10);
    len = 10 + cli_escape(line + 10, need - 10, msg);
    line[len++] = '\n';
    while (off < len) {
        w = write(STDERR_FILENO, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (line != stack)
        free(line);
}

const char *cli_reason(const char *msg, const char *name)
{
    size_t len = name ? strlen(name) : 0;

    if (len && strncmp(msg, name, len) == 0 && strncmp(msg + len, ": ", 2) == 0)
        return msg + len + 2;
    return msg;
}

int cli_fail_as(int code, const char *who, const char *msg,
                const char *name)
{
    char stack[2048], *line = stack;
    size_t need = (who ? strlen(who) + 2 : 0) + strlen(msg) + 1;

    if (need > sizeof(stack) && (line = malloc(need)) == NULL)
        line = stack;
    snprintf(line, line == stack ? sizeof(stack) : need, "%s%s%s",
             who ? who : "", who ? ": " : "", msg);
    cli_say(line);
    cli_done(code, cli_reason(msg, name));
    if (line != stack)
        free(line);
    return code;
}

int cli_fail(int code, const char *fmt, ...)
{
    char stack[2048], *msg = stack;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(stack, sizeof(stack), fmt, ap);
    va_end(ap);
    /* No silent truncation: a long URL or value in a message goes whole. */
    if (n >= (int)sizeof(stack) && (msg = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    } else if (msg == NULL) {
        msg = stack;
    }
    cli_say(msg);
    cli_done(code, msg);
    if (msg != stack)
        free(msg);
    return code;
}
