#ifndef RB_CLI_H
#define RB_CLI_H

/* Shared by the subcommands: option tables and parsing (args.c), messages
 * and output (output.c), help (help.c), connecting (config.h), processes
 * (spawn.h). Only cli/ prints, reads the environment, or exits. */

#include <stdio.h>

#include <argtable2.h>

#include "rbarrier.h"

#include "config.h"
#include "json.h"
#include "spawn.h"

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_REDIS = 1,
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_BROKEN = 3,
    CLI_EXIT_UNREACHABLE = 4,
    CLI_EXIT_TIMEOUT = 124
};

/* The exit codes a command can return, for its --help. */
enum cli_exit_bits {
    CLI_X_OK = 1 << 0,
    CLI_X_REDIS = 1 << 1,
    CLI_X_USAGE = 1 << 2,
    CLI_X_BROKEN = 1 << 3,
    CLI_X_UNREACHABLE = 1 << 4,
    CLI_X_TIMEOUT = 1 << 5,
    CLI_X_SIGNAL = 1 << 6,
    CLI_X_CMD = 1 << 7,      /* run: the command's own status */
    CLI_X_ALL = 0xff
};

typedef struct cli_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;     /* one line in the top-level help */
    const char *examples;    /* for --help: one or two real command lines,
                                separated by "\n" */
    unsigned exits;          /* cli_exit_bits */
} cli_cmd;

/* The command table (main.c). */
extern const cli_cmd cli_commands[];
extern const size_t cli_ncommands;

/* ---- help (help.c) ---- */
/* A subcommand's --help: usage, description, options, examples, exits. */
void cli_print_help(FILE *f, void **table, const char *cmd,
                    const char *description);
/* "-h" or "--help", as argv spells it. */
const char *cli_help_flag(int argc, char **argv);
/* The top-level help. */
void cli_usage(FILE *f);
/* rbarrier help [CMD] */
int cli_help_command(int argc, char **argv);
/* Say "unknown command", with the nearest command if one is close; 2. */
int cli_unknown_command(const char *word);
/* Edit distance, for suggestions (99 for words of 32 bytes or more). */
size_t cli_distance(const char *a, const char *b);
/* The command nearest to word, or NULL. */
const char *cli_suggest(const char *word);

int cmd_wait(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_lock(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_sync(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_metrics(int argc, char **argv);

/* Options every subcommand takes. */
typedef struct cli_common {
    struct arg_lit *help;
    struct arg_str *url;
    struct arg_str *prefix;
    struct arg_lit *json;
    /* connection flags (connopts.c) */
    struct arg_str *user, *cacert, *cacertdir, *cert, *key, *sni;
    struct arg_lit *insecure;
    struct arg_str *connect_timeout;
    struct arg_str *replicas;
} cli_common;

void cli_common_init(cli_common *c);

/* Put every common option into table (exactly CLI_COMMON_COUNT entries),
 * so a subcommand's table is its own options, these, and its arg_end:
 * `void *table[OWN + CLI_COMMON_COUNT + 1]`. Returns CLI_COMMON_COUNT. */
#define CLI_COMMON_COUNT (6 + CLI_CONNOPTS_COUNT)
size_t cli_common_table(const cli_common *c, void **table);

/* Parse argv against table (NULL-checked). Returns -1 to go on, or the exit
 * code to return now: 0 after --help, 2 after a usage error (one line per
 * error, on stderr). */
int cli_parse(int argc, char **argv, void **table, struct arg_end *end,
              const cli_common *common, const char *cmd,
              const char *description);

/* ---- output ----
 * Messages: "rbarrier: <msg>" on stderr, control characters escaped, one
 * write(2) per line. --json: one object per command on stdout, built by the
 * command in cli_out_json() and ended by cli_done (README "JSON"). */

/* Say msg (formatted) on stderr, end the --json object with outcome and
 * reason from code and msg, and return code. */
int cli_fail(int code, const char *fmt, ...) CLI_PRINTF(2, 3);
/* The same for a message about `who` (a worker; NULL: none): stderr says
 * "rbarrier: <who>: <msg>"; the JSON reason is msg without a leading
 * "<name>: " (the library names the barrier; JSON has it in "name"). */
int cli_fail_as(int code, const char *who, const char *msg,
                const char *name);
/* msg past a leading "<name>: ", for a JSON reason. */
const char *cli_reason(const char *msg, const char *name);
/* Say a line on stderr without ending anything (warnings, notes). */
void cli_message(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_say(const char *msg);
/* The command's JSON object under --json, NULL otherwise (or once written).
 * Add the fields it knows (name, param, gen, n, id, ...); cli_done adds
 * outcome, reason and exit. */
cli_json *cli_out_json(void);
/* Turn --json on (cli_parse does when argv holds --json). */
void cli_json_enable(void);
/* Write the --json object (once): outcome from code ("ok", "broken",
 * "timeout", "interrupted", "error"), reason when not ok, exit. Returns
 * code; a no-op without --json. */
int cli_done(int code, const char *reason);

/* rbarrier's own verdict for --json's "outcome" when the exit status is a
 * command's, not rbarrier's (README "What rbarrier guarantees"): "ok",
 * "command-failed", "broken", "timeout", "interrupted", "lost" or
 * "error". Without it the word follows the exit code. */
void cli_verdict(const char *word);
/* Record a failed write to stdout (errno e); cli_finish reports it. */
void cli_stdout_failed(int e);
/* After a command: flush stdout; if anything written to it was lost, say
 * so in one line and turn exit 0 into 1. Returns the exit code. */
int cli_finish(int code);
/* Before anything else: occupy a closed fd 0, 1 or 2 (see output.c). */
void cli_std_fds(void);
/* The outcome word for an exit code. */
const char *cli_outcome(int code);

/* Fill err with RB_EINVAL and a formatted message; returns RB_EINVAL. */
int cli_error(rb_error *err, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Exit code for a library result (signal: the signal that cancelled). */
int cli_exit_code(int rb_rc, int signal_number);

/* ---- connection flags: --user, TLS, client names (connopts.c) ---- */

#define CLI_CONNOPTS_COUNT 7
void cli_connopts_init(cli_common *c);
/* Put the connection flags into table; returns how many (at most
 * CLI_CONNOPTS_COUNT). */
size_t cli_connopts_table(const cli_common *c, void **table);
/* Connection flag i (user, cacert, cacertdir, cert, key, sni, in that
 * order): the flag's value (then exported as its RBARRIER_* variable for
 * child processes), else the variable's, else NULL; *origin names the flag
 * (without "--") or the variable. */
const char *cli_connopts_value(const cli_common *common, size_t i,
                               const char **origin);
/* 1 when flag i was on the command line. */
int cli_connopts_given(const cli_common *common, size_t i);
/* Name this process's connections after a parsed command line:
 * rbarrier:<command>:<--name|--param>:<--id|--worker, else hostname:pid>. */
void cli_connopts_name(void **table, const char *cmd);
const char *cli_connopts_client_name(void);

/* Check a barrier name, build cfg (config.h) and open a connection: -1
 * to go on, or the exit code after saying why not (status, reset). */
int cli_open_barrier(const cli_common *common, const char *name,
                     cli_config *cfg, rb_conn **conn);

/* status: add job NAME's state (job_status.c): a "job" object under
 * --json, lines otherwise; *exists 0 when no job of that name is kept. */
int cli_job_status(rb_conn *conn, const char *prefix, const char *name,
                   int *exists, rb_error *err);

/* --no-history (history.c), for the commands that write a name's
 * history: wait, run, lock. */
struct arg_lit *cli_no_history_flag(void);
/* With flag given, turn name's history off for ttl_ms (0: a day) before
 * anything is recorded: -1 to go on, else the exit code after saying why
 * not. */
int cli_history_off(const struct arg_lit *flag, rb_conn *conn,
                    const char *prefix, const char *name, long long ttl_ms);

/* ---- option values (pure; unit-tested) ---- */

/* --expect's value (expect.c): the ids comma-separated, or @FILE (ids
 * separated by newlines, commas or blanks; *owned is then the list read,
 * to be freed); each a valid id, listed once, at most RB_N_MAX. */
int cli_parse_expect(const char *arg, const char **list, char **owned,
                     long *count, rb_error *err);

/* A party count: decimal integer 1..RB_N_MAX. */
int cli_parse_count(const char *text, const char *what, long *out,
                    rb_error *err);
/* Seconds, fractions allowed, >= 0 (or > 0 unless allow_zero). */
int cli_parse_seconds(const char *text, const char *what, int allow_zero,
                      double *out, rb_error *err);
/* A whole number in [lo, hi]. */
int cli_parse_long(const char *text, const char *what, long lo, long hi,
                   long *out, rb_error *err);

/* A duration as timeout(1) takes it (90, 1.5, 30s, 5m, 2h, 1d) into
 * milliseconds, in [min_ms, max_ms]; the caller decides what 0 means
 * ("no limit" for --timeout). Blanks, signs, exponents and unknown units
 * are bad input. */
int cli_parse_duration(const char *text, const char *what, long long min_ms,
                       long long max_ms, long long *out_ms, rb_error *err);
/* Bounds of the duration options (README "Durations"). Every one fits the
 * library's millisecond arithmetic with room to spare. */
#define CLI_TIMEOUT_MAX_MS (365LL * 86400 * 1000)  /* 365d; 0 = no limit */
#define CLI_LEASE_MIN_MS 100LL                      /* 0.1s */
#define CLI_LEASE_MAX_MS (86400LL * 1000)           /* 1d */
#define CLI_KILL_AFTER_MIN_MS 1LL                   /* 0.001s */
#define CLI_KILL_AFTER_MAX_MS (86400LL * 1000)      /* 1d */
#define CLI_TTL_MIN_MS 1000LL                       /* 1s */
#define CLI_TTL_MAX_MS (365LL * 86400 * 1000)       /* 365d */
/* ms as the shortest exact duration text: 1d, 90s, 0.300s. */
void cli_format_ms(char *buf, size_t len, long long ms);

/* Default party id: hostname:pid. */
void cli_default_id(char *buf, size_t len);

#endif
