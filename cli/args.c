/* The command line: the options every subcommand takes, parsing with
 * whole option names only (a forgotten value and a misspelt flag are
 * caught before argtable sees them), and the exit code of a library
 * result. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_common_init(cli_common *c)
{
    c->help = arg_lit0("h", "help", "print this help and exit");
    c->url = arg_str0(NULL, "url", "URL",
                      "redis[s]://[[user]:pass@]host[:port][,host2...][/db], "
                      "unix:///path[?db=N] or redis[s]-sentinel://"
                      "host:26379[,...][/db]#MASTER (default $RBARRIER_URL, "
                      "else " CLI_DEFAULT_URL "; a password left out of the "
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
 * mean": one name starts with (a prefix: --na for --name, not --n, which
 * is one edit away), else within 2 edits. NULL: none close. */
static const char *nearest_long(void **table, const char *name, size_t len)
{
    struct arg_hdr **hdr = (struct arg_hdr **)table;
    const char *best = NULL;
    char word[32];
    size_t best_d = 4, d;

    if (len == 0 || len >= sizeof(word))
        return NULL;
    memcpy(word, name, len);
    word[len] = '\0';
    for (; !((*hdr)->flag & ARG_TERMINATOR); hdr++) {
        const char *lo = (*hdr)->longopts;

        if (lo == NULL || lo[0] == '\0' || strchr(lo, ','))
            continue;
        d = cli_distance(word, lo) + 1;
        if (len >= 2 && strncmp(word, lo, len) == 0)
            d = 0;
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

/* The first word of argv (before any "--") that is neither an option nor
 * an option's value, or NULL: for lock and run, the command whose "--"
 * was forgotten. */
static const char *stray_word(int argc, char **argv, void **table)
{
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *w = argv[i];
        struct arg_hdr **hdr = (struct arg_hdr **)table;
        struct arg_hdr *h = NULL;

        if (strncmp(w, "--", 2) == 0) {
            if (strchr(w, '=') == NULL &&
                (h = find_long(table, w + 2, strlen(w + 2))) != NULL &&
                (h->flag & ARG_HASVALUE))
                i++;
            continue;
        }
        if (w[0] != '-' || w[1] == '\0')
            return w;
        if (w[2] != '\0')
            continue;    /* -w5: the value is attached */
        for (; !((*hdr)->flag & ARG_TERMINATOR); hdr++)
            if ((*hdr)->shortopts && strchr((*hdr)->shortopts, w[1]))
                h = *hdr;
        if (h && (h->flag & ARG_HASVALUE))
            i++;
    }
    return NULL;
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
    const char *stray;

    /* Errors under --json are JSON too, parse errors included. */
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0)
            cli_json_enable();
    if (arg_nullcheck(table) != 0)
        return cli_fail(CLI_EXIT_REDIS, "out of memory");
    if ((code = check_long_options(argc, argv, table)) >= 0)
        return code;
    if ((strcmp(cmd, "lock") == 0 || strcmp(cmd, "run") == 0) &&
        (stray = stray_word(argc, argv, table)) != NULL)
        return cli_fail(CLI_EXIT_USAGE, "unexpected argument '%s' (did you "
                        "forget '--' before the command? rbarrier %s "
                        "[options] -- CMD [ARGS])", stray, cmd);
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

int cli_open_barrier(const cli_common *common, const char *name,
                     cli_config *cfg, rb_conn **conn)
{
    rb_error err;

    if (rb_check_name(name, "barrier name", &err) != RB_OK ||
        cli_config_build(cfg, common, &err) != RB_OK)
        return cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
    return cli_config_open(cfg, conn);
}
