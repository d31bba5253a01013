
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define DEFAULT_URL "redis://127.0.0.1:6379/0"


void cli_common_init(cli_common *c)
{
    c->help = arg_lit0("h", "help", "print this help and exit");
    c->url = arg_str0(NULL, "url", "URL",
                      "redis[s]://[[user]:pass@]host[:port][,host2...][/db], "
                      "unix:///path[?db=N] or redis[s]-sentinel://"
                      "host:26379[,...][/db]#MASTER (default $RBARRIER_URL, "
                      "else " DEFAULT_URL "; a password left out of the "
                      "URL comes from $REDISCLI_AUTH)");
    c->prefix = arg_str0(NULL, "prefix", "P", "key prefix (default rb)");
    c->json = arg_lit0(NULL, "json", "print the outcome as one JSON object");
    c->connect_timeout = arg_str0(NULL, "connect-timeout", "SEC",
                                  "keep trying to reach Redis for SEC "
                                  "seconds (default: until --timeout, or "
                                  "one attempt)");
    c->replicas = arg_str0(NULL, "replicas", "K",
                           "each state change waits until K replicas have "
                           "it (WAIT K), resent until the deadline; short "
                           "of K: exit 1");
    cli_connopts_init(c);
}

size_t cli_common_table(const cli_common *c, void **table)
{
    size_t k = 0;

    table[k++] = c->url;
    table[k++] = c->prefix;
    table[k++] = c->json;
    table[k++] = c->connect_timeout;
    table[k++] = c->replicas;
    k += cli_connopts_table(c, table + k);
    table[k++] = c->help;
    return k;
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

/* Set by cli_url, applied by cli_open: every subcommand calls both. */
static long long connect_timeout_ms;
static long replicas;

/* ---- output ---------------------------------------------------------- */

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

const char *cli_outcome(int code)
{
    switch (code) {
    case CLI_EXIT_OK: return "ok";
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
    if (code != CLI_EXIT_OK)
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

/* The table entry whose long option is exactly `name` (len bytes), or
 * NULL. argtable2 hands long options to getopt_long, which also takes any
 * unambiguous prefix (--na for --name); the scan below accepts whole names
 * only, so what a script says is what it gets. */
static struct arg_hdr *find_long(void **table, const char *name, size_t len)
{
    struct arg_hdr **hdr = (struct arg_hdr **)table;
    const char *p, *comma;

    for (; !((*hdr)->flag & ARG_TERMINATOR); hdr++)
        for (p = (*hdr)->longopts; p && *p; p = comma ? comma + 1 : NULL) {
            comma = strchr(p, ',');
            if ((size_t)(comma ? comma - p : (ptrdiff_t)strlen(p)) == len &&
                strncmp(p, name, len) == 0)
                return *hdr;
            if (comma == NULL)
                break;
        }
    return NULL;
}

/* The table's long option nearest to name (len bytes), for "did you
 * mean": within 2 edits, or name is a prefix of it. NULL: none close. */
static const char *nearest_long(void **table, const char *name, size_t len)
{
    struct arg_hdr **hdr = (struct arg_hdr **)table;
    const char *best = NULL;
    char word[32];
    size_t best_d = 3, d;

    if (len == 0 || len >= sizeof(word))
        return NULL;
    memcpy(word, name, len);
    word[len] = '\0';
    for (; !((*hdr)->flag & ARG_TERMINATOR); hdr++) {
        const char *lo = (*hdr)->longopts;

        if (lo == NULL || lo[0] == '\0' || strchr(lo, ','))
            continue;
        d = cli_distance(word, lo);
        if (len >= 3 && strncmp(word, lo, len) == 0)
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = lo;
        }
    }
    return best;
}

/* Is word one of the table's own options (--long, --long=..., or -x)? */
static int is_own_option(void **table, const char *word)
{
    struct arg_hdr **hdr = (struct arg_hdr **)table;

    if (strncmp(word, "--", 2) == 0 && word[2] != '\0')
        return find_long(table, word + 2, strcspn(word + 2, "=")) != NULL;
    if (word[0] != '-' || word[1] == '\0' || word[2] != '\0')
        return 0;
    for (; !((*hdr)->flag & ARG_TERMINATOR); hdr++)
        if ((*hdr)->shortopts && strchr((*hdr)->shortopts, word[1]))
            return 1;
    return 0;
}

/* Check the long options of argv before argtable sees them: whole names
 * only, and no empty value; a value that is itself one of this command's
 * options is a forgotten value (`--name --json`), while any other word
 * starting with '-' is a value (`--by -1`, `--once '-x'`). Returns -1 or
 * the exit code after saying why. */
static int check_long_options(int argc, char **argv, void **table)
{
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *opt = argv[i], *eq, *near;
        struct arg_hdr *hdr;
        size_t len;

        if (strncmp(opt, "--", 2) != 0)
            continue;
        eq = strchr(opt, '=');
        len = eq ? (size_t)(eq - opt - 2) : strlen(opt + 2);
        if ((hdr = find_long(table, opt + 2, len)) == NULL) {
            if ((near = nearest_long(table, opt + 2, len)) != NULL)
                return cli_fail(CLI_EXIT_USAGE, "unknown option '%.*s' (did "
                                "you mean --%s?)", (int)(len + 2), opt, near);
            return cli_fail(CLI_EXIT_USAGE, "unknown option '%.*s'",
                            (int)(len + 2), opt);
        }
        if (!(hdr->flag & ARG_HASVALUE)) {
            if (eq)
                return cli_fail(CLI_EXIT_USAGE, "%.*s takes no value",
                                (int)(len + 2), opt);
            continue;
        }
        if (eq == NULL && i + 1 >= argc)
            return cli_fail(CLI_EXIT_USAGE, "%s needs a value", opt);
        if ((eq && eq[1] == '\0') || (!eq && argv[i + 1][0] == '\0'))
            return cli_fail(CLI_EXIT_USAGE, "%.*s must not be empty",
                            (int)(len + 2), opt);
        if (!eq && is_own_option(table, argv[i + 1]))
            return cli_fail(CLI_EXIT_USAGE, "%s needs a value, not the "
                            "option %s (a value that looks like one: "
                            "%s=VALUE)", opt, argv[i + 1], opt);
        if (!eq)
            i++;    /* the value, whatever it looks like */
    }
    return -1;
}

/* argtable's error lines ("rbarrier: missing option --n"), as one line:
 * one error, one line. */
static int report_parse_errors(struct arg_end *end)
{
    char *text = NULL, *p, *q;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    if (f == NULL)
        return cli_fail(CLI_EXIT_USAGE, "bad command line");
    arg_print_errors(f, end, "rbarrier");
    fclose(f);
    /* Drop each line's "rbarrier: " and join the lines with "; ". */
    for (p = q = text; *p; ) {
        if (strncmp(p, "rbarrier: ", 10) == 0)
            p += 10;
        while (*p && *p != '\n')
            *q++ = *p++;
        while (*p == '\n')
            p++;
        if (*p) {
            *q++ = ';';
            *q++ = ' ';
        }
    }
    *q = '\0';
    cli_fail(CLI_EXIT_USAGE, "%s", text[0] ? text : "bad command line");
    free(text);
    return CLI_EXIT_USAGE;
}

int cli_parse(int argc, char **argv, void **table, struct arg_end *end,
              const cli_common *common, const char *cmd,
              const char *description)
{
    int nerrors, i, code;

    /* Errors under --json are JSON too, parse errors included. */
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0)
            cli_json_enable();
    if (arg_nullcheck(table) != 0)
        return cli_fail(CLI_EXIT_REDIS, "out of memory");
    if ((code = check_long_options(argc, argv, table)) >= 0)
        return code;
    nerrors = arg_parse(argc, argv, table);
    /* Help wins only when it is all that was asked (the only errors then
     * are the mandatory options it left out); otherwise a parse error wins,
     * and help with anything else is bad usage: `wait --name x --n 2 -h`
     * must not exit 0 without waiting. */
    if (common->help->count > 0 && argc == 2) {
        cli_print_help(stdout, table, cmd, description);
        return CLI_EXIT_OK;
    }
    if (nerrors > 0)
        return report_parse_errors(end);
    if (common->help->count > 0)
        return cli_fail(CLI_EXIT_USAGE, "%s takes no other arguments (for "
                        "help alone: rbarrier help %s)",
                        cli_help_flag(argc, argv), cmd);
    cli_connopts_name(table, cmd);
    return -1;
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
    default: return CLI_EXIT_REDIS;
    }
}

int cli_url(const cli_common *common, rb_url *url, rb_error *err)
{
    const char *text = common->url->count ? common->url->sval[0] : NULL;
    const char *auth = getenv("REDISCLI_AUTH");
    int from_env = 0, rc;

    if (common->connect_timeout->count &&
        cli_parse_duration(common->connect_timeout->sval[0],
                           "--connect-timeout", 0, CLI_TIMEOUT_MAX_MS,
                           &connect_timeout_ms, err) != RB_OK)
        return RB_EINVAL;
    if (common->replicas->count &&
        cli_parse_long(common->replicas->sval[0], "--replicas", 0, 1000,
                       &replicas, err) != RB_OK)
        return RB_EINVAL;
    if (text == NULL) {
        text = getenv("RBARRIER_URL");
        from_env = text != NULL && text[0] != '\0';
    }
    if (text == NULL || text[0] == '\0')
        text = DEFAULT_URL;
    rc = rb_url_parse(url, text, err);
    if (rc != RB_OK) {
        /* Say where the URL came from; the library never quotes it. */
        char msg[sizeof(err->msg)];

        snprintf(msg, sizeof(msg), "%s: %.480s",
                 from_env ? "$RBARRIER_URL" : "--url", err->msg);
        memcpy(err->msg, msg, sizeof(msg));
        return rc;
    }
    if ((rc = cli_connopts_apply(common, url, err)) != RB_OK)
        return rc;
    /* The password: the URL's, else $REDISCLI_AUTH (redis-cli's rule). */
    if (!url->has_password && auth && auth[0]) {
        if (strlen(auth) >= sizeof(url->password))
            return cli_error(err, "$REDISCLI_AUTH is longer than %zu bytes",
                             sizeof(url->password) - 1);
        memcpy(url->password, auth, strlen(auth) + 1);
        url->has_password = 1;
    }
    if (url->user[0] && !url->has_password)
        return cli_error(err, "user '%s' needs a password: put it in "
                         "$REDISCLI_AUTH (or in the URL, user:PASSWORD@host)",
                         url->user);
    return RB_OK;
}

int cli_open_barrier(const cli_common *common, const char *name,
                     const char **prefix, rb_conn **conn)
{
    rb_error err;
    rb_url url;

    if (rb_check_name(name, "barrier name", &err) != RB_OK ||
        cli_prefix(common, prefix, &err) != RB_OK ||
        cli_url(common, &url, &err) != RB_OK)
        return cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
    return cli_open(&url, conn);
}

int cli_prefix(const cli_common *common, const char **out, rb_error *err)
{
    *out = common->prefix->count ? common->prefix->sval[0] : "rb";
    return rb_check_name(*out, "prefix", err);
}

/* Said once, so that a long wait on a Redis that is down is not silent. */
static void say_unreachable(void *payload, const char *what,
                            long long left_ms)
{
    char when[32];
    time_t t;

    (void)payload;
    if (left_ms == 0) {
        cli_message("%s; retrying", what);
        return;
    }
    t = time(NULL) + (time_t)((left_ms + 999) / 1000);
    strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
    cli_message("%s; retrying until %s", what, when);
}

int cli_open(const rb_url *url, rb_conn **out)
{
    if (cli_install_signals() != 0)
        return cli_fail(CLI_EXIT_REDIS, "pipe: %s", strerror(errno));
    return cli_open_cancel(url, cli_signal_fd(), out);
}

int cli_open_cancel(const rb_url *url, int cancel_fd, rb_conn **out)
{
    rb_conn_opts opts = RB_CONN_OPTS_INIT;
    rb_error err;

    if (cli_install_signals() != 0)
        return cli_fail(CLI_EXIT_REDIS, "pipe: %s", strerror(errno));
    opts.cancel_fd = cancel_fd;
    opts.connect_timeout_ms = connect_timeout_ms;
    opts.replicas = (int)replicas;
    opts.on_unreachable = say_unreachable;
    opts.client_name = cli_connopts_client_name();
    opts.tls = cli_connopts_tls(url);
    if (rb_conn_new(out, url, &opts, &err) != RB_OK)
        return cli_fail(cli_exit_code(err.code, 0), "%s", err.msg);
    return -1;
}
