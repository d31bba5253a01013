/* Help that teaches: the top-level help, each subcommand's --help (usage,
 * options, examples, the exit codes that command can return), `rbarrier
 * help CMD`, and the nearest command for a typo. Every line fits 80
 * columns. */

#include <stdio.h>
#include <string.h>

#include "cli.h"

#define WIDTH 80
#define GLOSS_COL 26  /* where an option's description starts */

static const struct {
    int bit;
    const char *code, *text;
} exit_texts[] = {
    { CLI_X_OK, "0", "done (a barrier: every round passed)" },
    { CLI_X_CMD, "N", "the command's own exit status" },
    { CLI_X_REDIS, "1", "Redis answered with an error, or state was lost" },
    { CLI_X_USAGE, "2", "bad usage or bad input; nothing was written" },
    { CLI_X_BROKEN, "3", "the round was broken (another party timed out, "
                         "died or was interrupted, or reset); the reason is "
                         "on stderr" },
    { CLI_X_UNREACHABLE, "4", "Redis could not be reached before the "
                              "deadline" },
    { CLI_X_TIMEOUT, "124", "this party's own --timeout expired (the round "
                            "breaks for the others)" },
    { CLI_X_SIGNAL, "128+N", "interrupted by signal N" },
};

/* Where a command's codes mean something else than a barrier's. */
static const struct {
    const char *cmd;
    int bit;
    const char *text;
} exit_overrides[] = {
    { "lock", CLI_X_OK, "the command exited 0" },
    { "lock", CLI_X_REDIS, "the lock was not had (-n, -w; -E N sets the "
                           "code), Redis answered with an error, or the "
                           "lock's state was lost while held" },
    { "lock", CLI_X_BROKEN, "the held lock was lost: revoked by `reset "
                            "--lock`, or its lease ran out; the command was "
                            "stopped" },
    { "lock", CLI_X_UNREACHABLE, "Redis could not be reached (while held: "
                                 "the command was stopped)" },
    { "lock", CLI_X_TIMEOUT, "--timeout passed before the lock was had "
                             "(with -E N: N)" },
    { "run", CLI_X_BROKEN, "the job was broken (another member failed, "
                           "died, made no progress, or was stopped, or "
                           "reset); the reason is on stderr" },
    { "run", CLI_X_TIMEOUT, "this member's own --timeout expired while "
                            "entering (the job breaks for the others)" },
};

static const char *exit_text(const char *cmd, int bit, const char *text)
{
    size_t i;

    for (i = 0; cmd && i < sizeof(exit_overrides) / sizeof(exit_overrides[0]);
         i++)
        if (exit_overrides[i].bit == bit &&
            strcmp(exit_overrides[i].cmd, cmd) == 0)
            return exit_overrides[i].text;
    return text;
}

/* Print text from column `col` (the cursor is there), wrapping at WIDTH
 * with continuation lines indented to `indent`; explicit newlines are kept
 * (and indented). */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;

    while (*p) {
        const char *word = p;
        int len;

        if (*p == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            p++;
            continue;
        }
        if (*p == ' ') {
            p++;
            continue;
        }
        while (*p && *p != ' ' && *p != '\n')
            p++;
        len = (int)(p - word);
        if (col > indent && col + 1 + len > WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", len, word);
        col += len;
    }
    fputc('\n', f);
}

/* "-h, --help" or "--name NAME" for one table entry. */
static void option_words(char *buf, size_t len, const struct arg_hdr *h)
{
    char first_long[64] = "";
    const char *comma;
    size_t n = 0;

    buf[0] = '\0';
    if (h->longopts && h->longopts[0]) {
        comma = strchr(h->longopts, ',');
        snprintf(first_long, sizeof(first_long), "%.*s",
                 (int)(comma ? (size_t)(comma - h->longopts)
                             : strlen(h->longopts)), h->longopts);
    }
    if (h->shortopts && h->shortopts[0])
        n += (size_t)snprintf(buf + n, len - n, "-%c%s", h->shortopts[0],
                              first_long[0] ? ", " : "");
    if (first_long[0] && n < len)
        n += (size_t)snprintf(buf + n, len - n, "--%s", first_long);
    if ((h->flag & ARG_HASVALUE) && h->datatype && n < len)
        snprintf(buf + n, len - n, " %s", h->datatype);
}

static void print_usage_line(FILE *f, void **table, const char *cmd)
{
    struct arg_hdr **h = (struct arg_hdr **)table;
    char words[96], item[100];
    int col;

    col = fprintf(f, "usage: rbarrier %s", cmd);
    for (; !((*h)->flag & ARG_TERMINATOR); h++) {
        option_words(words, sizeof(words), *h);
        if (words[0] == '\0' || ((*h)->shortopts && (*h)->shortopts[0] == 'h'))
            continue;
        if (strncmp(words, "-", 1) != 0)
            continue;
        /* The usage line names an option once, by its long name. */
        if (words[1] != '-' && strstr(words, ", --"))
            memmove(words, strstr(words, ", --") + 2,
                    strlen(strstr(words, ", --") + 2) + 1);
        snprintf(item, sizeof(item), (*h)->mincount > 0 ? "%s" : "[%s]",
                 words);
        if (col + 1 + (int)strlen(item) > WIDTH) {
            fprintf(f, "\n%*s", 16, "");
            col = 16;
        } else {
            fputc(' ', f);
            col++;
        }
        col += fprintf(f, "%s", item);
    }
    fputc('\n', f);
}

static const cli_cmd *find_cmd(const char *name)
{
    size_t i;

    for (i = 0; i < cli_ncommands; i++)
        if (strcmp(cli_commands[i].name, name) == 0)
            return &cli_commands[i];
    return NULL;
}

static void print_exits(FILE *f, const char *cmd, unsigned exits)
{
    size_t i;

    fprintf(f, "exit status:\n");
    for (i = 0; i < sizeof(exit_texts) / sizeof(exit_texts[0]); i++)
        if (exits & (unsigned)exit_texts[i].bit) {
            fprintf(f, "  %-6s", exit_texts[i].code);
            /* "0" says what success means for a barrier command only. */
            wrap(f, exit_text(cmd, exit_texts[i].bit,
                              exit_texts[i].bit == CLI_X_OK &&
                                      !(exits & CLI_X_BROKEN)
                                  ? "done" : exit_texts[i].text), 8, 8);
        }
}

void cli_print_help(FILE *f, void **table, const char *cmd,
                    const char *description)
{
    struct arg_hdr **h = (struct arg_hdr **)table;
    const cli_cmd *c = find_cmd(cmd);
    char words[96];
    int col;

    print_usage_line(f, table, cmd);
    fprintf(f, "\n%s\n\noptions:\n", description);
    for (; !((*h)->flag & ARG_TERMINATOR); h++) {
        option_words(words, sizeof(words), *h);
        if (words[0] == '\0')
            continue;
        col = fprintf(f, "  %s", words);
        if (col + 2 > GLOSS_COL) {
            fprintf(f, "\n%*s", GLOSS_COL, "");
        } else {
            fprintf(f, "%*s", GLOSS_COL - col, "");
        }
        wrap(f, (*h)->glossary ? (*h)->glossary : "", GLOSS_COL, GLOSS_COL);
    }
    if (c && c->examples) {
        fprintf(f, "\nexamples:\n  ");
        wrap(f, c->examples, 2, 2);
    }
    fputc('\n', f);
    print_exits(f, c ? c->name : NULL, c ? c->exits : CLI_X_ALL);
}

const char *cli_help_flag(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0)
            return "--help";
    return "-h";
}

void cli_usage(FILE *f)
{
    size_t i;

    fprintf(f,
        "usage: rbarrier <command> [options]\n"
        "       rbarrier help <command>    (or: rbarrier <command> --help)\n"
        "       rbarrier -V | --version\n\n"
        "Barriers and shared counters for jobs on many machines, kept in "
        "Redis.\n\ncommands:\n");
    for (i = 0; i < cli_ncommands; i++)
        fprintf(f, "  %-8s %s\n", cli_commands[i].name,
                cli_commands[i].summary);
    fprintf(f,
        "\nexample:\n"
        "  rbarrier wait --name nightly-merge --n 4 --timeout 10m && "
        "./merge-step\n\n"
        "environment:\n"
        "  RBARRIER_URL   where Redis is when --url is not given (default\n"
        "                 redis://127.0.0.1:6379/0)\n"
        "  REDISCLI_AUTH  the password, when the URL has none (so it need "
        "not sit\n"
        "                 in argv, where ps shows it)\n\n");
    print_exits(f, NULL, CLI_X_ALL & ~(unsigned)CLI_X_CMD);
}

size_t cli_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j, prev[32], cur[32];

    if (la >= 32 || lb >= 32)
        return 99;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del
                                                                      : ins);
        }
        memcpy(prev, cur, sizeof(prev));
    }
    return prev[lb];
}

const char *cli_suggest(const char *word)
{
    const char *best = NULL;
    size_t i, d, best_d = 3;

    if (cli_distance(word, "help") < best_d)
        return "help";
    for (i = 0; i < cli_ncommands; i++) {
        d = cli_distance(word, cli_commands[i].name);
        /* A prefix of three letters or more names its command too. */
        if (strlen(word) >= 3 &&
            strncmp(word, cli_commands[i].name, strlen(word)) == 0)
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = cli_commands[i].name;
        }
    }
    return best;
}

int cli_unknown_command(const char *word)
{
    const char *near = cli_suggest(word);

    if (near)
        return cli_fail(CLI_EXIT_USAGE, "unknown command '%s' (did you mean "
                        "'%s'? see 'rbarrier --help')", word, near);
    return cli_fail(CLI_EXIT_USAGE, "unknown command '%s' (see 'rbarrier "
                    "--help')", word);
}

int cli_help_command(int argc, char **argv)
{
    const cli_cmd *c;
    char *sub[3];
    char help[] = "--help";

    if (argc == 1 || (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
                                    strcmp(argv[1], "--help") == 0))) {
        cli_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 2)
        return cli_fail(CLI_EXIT_USAGE, "help takes one command name, "
                        "e.g. 'rbarrier help wait'");
    if ((c = find_cmd(argv[1])) == NULL)
        return cli_unknown_command(argv[1]);
    sub[0] = argv[1];
    sub[1] = help;
    sub[2] = NULL;
    return c->fn(2, sub);
}
