#ifndef RB_CLI_CONFIG_H
#define RB_CLI_CONFIG_H

/* Where and how to connect, decided once per command from argv and the
 * environment (config.c): the URL (--url, else $RBARRIER_URL, else the
 * default), the password (the URL's, else $REDISCLI_AUTH), the ACL user,
 * the TLS files, --connect-timeout, --replicas and --prefix. config.c is
 * the only cli file that calls the library's URL and connection-option
 * API. */

#include "rbarrier.h"

struct cli_common;

#define CLI_DEFAULT_URL "redis://127.0.0.1:6379/0"
/* The longest password the library takes (rb_url_set_password refuses
 * more): what a buffer for REDISCLI_AUTH=PASSWORD must hold. */
#define CLI_PASSWORD_MAX 1023

typedef struct cli_config {
    const char *prefix;           /* --prefix, else "rb" */
    rb_url *url;                  /* owned: cli_config_free */
    long long connect_timeout_ms; /* 0: until the operation's deadline */
    long replicas;                /* --replicas K */
    rb_tls_opts tls;              /* used only with a rediss URL */
} cli_config;

/* A config nothing was built into yet: cli_config_free takes it, so a
 * command declares its config with this and frees it on every path. */
#define CLI_CONFIG_INIT { .prefix = NULL }

/* Decide everything from the common flags and the environment. No I/O
 * but reading the TLS paths' metadata; a message never quotes the URL (it
 * may hold a password). RB_OK or RB_EINVAL (bad input: exit 2). */
int cli_config_build(cli_config *cfg, const struct cli_common *common,
                     rb_error *err);

/* Free what the config owns (its URL, password wiped); the config is
 * CLI_CONFIG_INIT again after. */
void cli_config_free(cli_config *cfg);

/* Use url_text instead (the demo's private server); RB_OK or RB_EINVAL. */
int cli_config_use_url(cli_config *cfg, const char *url_text, rb_error *err);

/* A connection handle whose calls a SIGINT/SIGTERM/SIGHUP cancels. -1 to
 * go on, or the exit code after saying why it could not. */
int cli_config_open(const cli_config *cfg, rb_conn **out);
/* The same with another cancel fd (run: one that a child's end wakes
 * too). */
int cli_config_open_cancel(const cli_config *cfg, int cancel_fd,
                           rb_conn **out);

/* For a command run inside a job: the URL without its password (0, or -1
 * when it does not fit), and the password to pass as REDISCLI_AUTH (NULL:
 * none). */
int cli_config_child_url(const cli_config *cfg, char *buf, size_t len);
const char *cli_config_password(const cli_config *cfg);

/* Connect to url_text until until_ms (CLOCK_MONOTONIC), no other option:
 * is a server there yet? RB_OK or the library's code with err filled. */
int cli_config_probe(const char *url_text, long long until_ms, rb_error *err);

#endif
