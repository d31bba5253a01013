/* config.h: one decision per setting, in one place. A URL comes from one
 * source (--url, else $RBARRIER_URL, else the default) and messages say
 * which; the password from the URL, else $REDISCLI_AUTH (redis-cli's
 * rule); a TLS setting from its flag, else its RBARRIER_* variable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"

/* The order of cli_connopts_value's flags. */
enum { OPT_USER, OPT_CACERT, OPT_CACERTDIR, OPT_CERT, OPT_KEY, OPT_SNI,
       OPT_COUNT };

/* A TLS file or directory that is not there is bad input, said before
 * any connection (OpenSSL's own error would come later and less clear). */
static int check_path(const cli_common *common, size_t i, const char *path,
                      const char *origin, int want_dir, rb_error *err)
{
    const char *dash = cli_connopts_given(common, i) ? "--" : "$";
    struct stat st;

    if (path == NULL)
        return RB_OK;
    if (stat(path, &st) != 0 || access(path, R_OK) != 0)
        return cli_error(err, "%s%s: cannot read '%.300s': %s", dash, origin,
                         path, strerror(errno));
    if (want_dir && !S_ISDIR(st.st_mode))
        return cli_error(err, "%s%s: '%.300s' is not a directory", dash,
                         origin, path);
    if (!want_dir && S_ISDIR(st.st_mode))
        return cli_error(err, "%s%s: '%.300s' is a directory, not a file",
                         dash, origin, path);
    return RB_OK;
}

/* --user and TLS. TLS flags with a plain URL: most likely a forgotten 's',
 * and the connection would go out in clear text. (Variables may be set
 * for other uses, so only flags count there.) */
static int apply_connopts(cli_config *cfg, const cli_common *common,
                          rb_error *err)
{
    const char *vals[OPT_COUNT], *origin[OPT_COUNT];
    const char *ins = getenv("RBARRIER_INSECURE");
    rb_error why;
    size_t i;

    for (i = 0; i < OPT_COUNT; i++)
        vals[i] = cli_connopts_value(common, i, &origin[i]);
    if (vals[OPT_USER] &&
        rb_url_set_user(cfg->url, vals[OPT_USER], &why) != RB_OK)
        return cli_error(err, "--user: %.480s", why.msg);
    cfg->tls = (rb_tls_opts)RB_TLS_OPTS_INIT;
    cfg->tls.cacert = vals[OPT_CACERT];
    cfg->tls.cacertdir = vals[OPT_CACERTDIR];
    cfg->tls.cert = vals[OPT_CERT];
    cfg->tls.key = vals[OPT_KEY];
    cfg->tls.sni = vals[OPT_SNI];
    if (common->insecure->count) {
        setenv("RBARRIER_INSECURE", "1", 1);
        cfg->tls.insecure = 1;
    } else if (ins && ins[0] && strcmp(ins, "0") != 0) {
        if (strcmp(ins, "1") != 0)
            return cli_error(err, "$RBARRIER_INSECURE must be 1 or 0");
        cfg->tls.insecure = 1;
    }
    if (!rb_url_is_tls(cfg->url)) {
        for (i = OPT_CACERT; i < OPT_COUNT; i++)
            if (cli_connopts_given(common, i))
                return cli_error(err, "--%s needs a rediss:// or "
                                 "rediss-sentinel:// URL", origin[i]);
        if (common->insecure->count)
            return cli_error(err, "--insecure needs a rediss:// or "
                             "rediss-sentinel:// URL");
        return RB_OK;
    }
    if (check_path(common, OPT_CACERT, vals[OPT_CACERT], origin[OPT_CACERT],
                   0, err) != RB_OK ||
        check_path(common, OPT_CACERTDIR, vals[OPT_CACERTDIR],
                   origin[OPT_CACERTDIR], 1, err) != RB_OK ||
        check_path(common, OPT_CERT, vals[OPT_CERT], origin[OPT_CERT], 0,
                   err) != RB_OK ||
        check_path(common, OPT_KEY, vals[OPT_KEY], origin[OPT_KEY], 0,
                   err) != RB_OK)
        return RB_EINVAL;
    return RB_OK;
}

static int parse_url(cli_config *cfg, const char *text, const char *source,
                     rb_error *err)
{
    rb_url *url;
    int rc = rb_url_parse(&url, text, err);

    if (rc != RB_OK) {
        /* Say where the URL came from; the library never quotes it. */
        char msg[sizeof(err->msg)];

        snprintf(msg, sizeof(msg), "%s: %.480s", source, err->msg);
        memcpy(err->msg, msg, sizeof(msg));
        return rc;
    }
    rb_url_free(cfg->url);
    cfg->url = url;
    return RB_OK;
}

/* The password: the URL's, else $REDISCLI_AUTH (redis-cli's rule). */
static int apply_password(cli_config *cfg, rb_error *err)
{
    const char *auth = getenv("REDISCLI_AUTH");
    rb_url *url = cfg->url;
    rb_error why;

    if (!rb_url_has_password(url) && auth && auth[0] &&
        rb_url_set_password(url, auth, &why) != RB_OK)
        return cli_error(err, "$REDISCLI_AUTH: %.480s", why.msg);
    if (rb_url_get_user(url)[0] && !rb_url_has_password(url))
        return cli_error(err, "user '%s' needs a password: put it in "
                         "$REDISCLI_AUTH (or in the URL, user:PASSWORD@host)",
                         rb_url_get_user(url));
    return RB_OK;
}

int cli_config_build(cli_config *cfg, const cli_common *common,
                     rb_error *err)
{
    const char *text = common->url->count ? common->url->sval[0] : NULL;
    const char *source = "--url";

    cli_config_free(cfg);
    cfg->prefix = common->prefix->count ? common->prefix->sval[0] : "rb";
    if (rb_check_name(cfg->prefix, "prefix", err) != RB_OK)
        return RB_EINVAL;
    if (common->connect_timeout->count &&
        cli_parse_duration(common->connect_timeout->sval[0],
                           "--connect-timeout", 0, CLI_TIMEOUT_MAX_MS,
                           &cfg->connect_timeout_ms, err) != RB_OK)
        return RB_EINVAL;
    if (common->replicas->count &&
        cli_parse_long(common->replicas->sval[0], "--replicas", 0, 1000,
                       &cfg->replicas, err) != RB_OK)
        return RB_EINVAL;
    if (text == NULL) {
        text = getenv("RBARRIER_URL");
        source = "$RBARRIER_URL";
    }
    if (text == NULL || text[0] == '\0')
        text = CLI_DEFAULT_URL;
    if (parse_url(cfg, text, source, err) != RB_OK ||
        apply_connopts(cfg, common, err) != RB_OK ||
        apply_password(cfg, err) != RB_OK)
        return RB_EINVAL;
    return RB_OK;
}

void cli_config_free(cli_config *cfg)
{
    rb_url_free(cfg->url);
    memset(cfg, 0, sizeof(*cfg));
}

int cli_config_use_url(cli_config *cfg, const char *url_text, rb_error *err)
{
    return parse_url(cfg, url_text, "url", err) == RB_OK &&
                   apply_password(cfg, err) == RB_OK
               ? RB_OK
               : RB_EINVAL;
}

/* Overwrite a buffer that held a password, in a way the compiler keeps. */
static void wipe(char *p, size_t n)
{
    volatile char *v = p;

    while (n--)
        *v++ = 0;
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

int cli_config_open(const cli_config *cfg, rb_conn **out)
{
    if (cli_install_signals() != 0)
        return cli_fail(CLI_EXIT_REDIS, "pipe: %s", strerror(errno));
    return cli_config_open_cancel(cfg, cli_signal_fd(), out);
}

int cli_config_open_cancel(const cli_config *cfg, int cancel_fd,
                           rb_conn **out)
{
    static int insecure_warned;
    rb_conn_opts opts = RB_CONN_OPTS_INIT;
    rb_error err;

    if (cli_install_signals() != 0)
        return cli_fail(CLI_EXIT_REDIS, "pipe: %s", strerror(errno));
    opts.cancel_fd = cancel_fd;
    opts.connect_timeout_ms = cfg->connect_timeout_ms;
    opts.replicas = (int)cfg->replicas;
    opts.on_unreachable = say_unreachable;
    opts.client_name = cli_connopts_client_name();
    if (rb_url_is_tls(cfg->url)) {
        opts.tls = &cfg->tls;
        if (cfg->tls.insecure && !insecure_warned) {
            insecure_warned = 1;
            cli_say("warning: --insecure: the server's TLS certificate is "
                    "not checked; anyone on the path can read and change "
                    "this connection");
        }
    }
    if (rb_conn_new(out, cfg->url, &opts, &err) != RB_OK)
        return cli_fail(cli_exit_code(err.code, 0), "%s", err.msg);
    return -1;
}

int cli_config_probe(const char *url_text, long long until_ms, rb_error *err)
{
    rb_conn *conn = NULL;
    rb_url *url = NULL;
    int rc;

    if ((rc = rb_url_parse(&url, url_text, err)) == RB_OK &&
        (rc = rb_conn_new(&conn, url, NULL, err)) == RB_OK)
        rc = rb_conn_connect(conn, until_ms, err);
    rb_conn_free(conn);
    rb_url_free(url);
    return rc;
}

int cli_config_child_url(const cli_config *cfg, char *buf, size_t len)
{
    /* A copy without the password, through its text (the URL is opaque);
     * the text that held the password is wiped. */
    char full[16384];   /* any URL the parser takes, percent-encoded */
    rb_url *bare = NULL;
    rb_error err;
    int rc = -1;

    if (rb_url_format(full, sizeof(full), cfg->url, 1, &err) == RB_OK &&
        rb_url_parse(&bare, full, &err) == RB_OK &&
        rb_url_set_password(bare, NULL, &err) == RB_OK &&
        rb_url_format(buf, len, bare, 0, &err) == RB_OK)
        rc = 0;
    wipe(full, sizeof(full));
    rb_url_free(bare);
    return rc;
}

const char *cli_config_password(const cli_config *cfg)
{
    return rb_url_get_password(cfg->url);
}
