/*
 * How the CLI connects, beyond the URL: the ACL user (--user), TLS
 * (redis-cli's --cacert, --cacertdir, --cert, --key, --sni, --insecure),
 * and the name each connection gives itself in CLIENT LIST. Each flag can
 * also come from an RBARRIER_* variable; a flag given on the command line
 * is exported as its variable, so the processes rbarrier starts (demo's
 * workers) connect the same way without the settings in their argv.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

typedef struct tls_flag {
    const char *name, *env, *meta, *help;
} tls_flag;

/* The order of the cli_common fields user..sni. */
static const tls_flag str_flags[] = {
    { "user", "RBARRIER_USER", "NAME",
      "ACL user, instead of the URL's (password from the URL or "
      "$REDISCLI_AUTH)" },
    { "cacert", "RBARRIER_CACERT", "FILE",
      "TLS: trust the CA certificates in FILE (default: the system's "
      "store)" },
    { "cacertdir", "RBARRIER_CACERTDIR", "DIR",
      "TLS: trust the CA certificates in DIR (hashed, as openssl rehash)" },
    { "cert", "RBARRIER_CERT", "FILE",
      "TLS: client certificate (servers with tls-auth-clients)" },
    { "key", "RBARRIER_KEY", "FILE", "TLS: the client certificate's key" },
    { "sni", "RBARRIER_SNI", "NAME",
      "TLS: server name to send and to verify instead of the URL's host" },
};

static rb_tls_opts tls;
static int insecure_warned;
/* A label, so cut at 255 bytes rather than refused: rb_conn_new takes
 * names up to that length, and a barrier name and an id may be longer. */
static char client_name[256];

static struct arg_str **str_field(cli_common *c, size_t i)
{
    struct arg_str **fields[] = { &c->user, &c->cacert, &c->cacertdir,
                                  &c->cert, &c->key, &c->sni };

    return fields[i];
}

void cli_connopts_init(cli_common *c)
{
    size_t i;

    for (i = 0; i < sizeof(str_flags) / sizeof(str_flags[0]); i++)
        *str_field(c, i) = arg_str0(NULL, str_flags[i].name,
                                    str_flags[i].meta, str_flags[i].help);
    c->insecure = arg_lit0(NULL, "insecure",
                           "TLS: accept any server certificate (says so on "
                           "stderr). Each flag here can also be set as "
                           "$RBARRIER_<FLAG>, e.g. $RBARRIER_CACERT");
}

size_t cli_connopts_table(const cli_common *c, void **table)
{
    size_t i, k = 0;

    for (i = 0; i < sizeof(str_flags) / sizeof(str_flags[0]); i++)
        table[k++] = *str_field((cli_common *)c, i);
    table[k++] = c->insecure;
    return k;
}

/* The flag's value, else its variable's (an empty one counts as unset).
 * A flag is exported for child processes. */
static const char *flag_or_env(struct arg_str *a, const char *env)
{
    const char *v;

    if (a->count) {
        setenv(env, a->sval[0], 1);
        return a->sval[0];
    }
    v = getenv(env);
    return v && v[0] ? v : NULL;
}

/* A TLS file or directory that is not there is bad input, said before
 * any connection (OpenSSL's own error would come later and less clear). */
static int check_path(const cli_common *common, size_t i, const char *path,
                      int want_dir, rb_error *err)
{
    struct stat st;
    const char *what = (*str_field((cli_common *)common, i))->count
                           ? str_flags[i].name : str_flags[i].env;
    const char *dash = (*str_field((cli_common *)common, i))->count ? "--"
                                                                    : "$";

    if (path == NULL)
        return RB_OK;
    if (stat(path, &st) != 0 || access(path, R_OK) != 0)
        return cli_error(err, "%s%s: cannot read '%.300s': %s", dash, what,
                         path, strerror(errno));
    if (want_dir && !S_ISDIR(st.st_mode))
        return cli_error(err, "%s%s: '%.300s' is not a directory", dash,
                         what, path);
    if (!want_dir && S_ISDIR(st.st_mode))
        return cli_error(err, "%s%s: '%.300s' is a directory, not a file",
                         dash, what, path);
    return RB_OK;
}

int cli_connopts_apply(const cli_common *common, rb_url *url, rb_error *err)
{
    const char *vals[sizeof(str_flags) / sizeof(str_flags[0])];
    const char *ins;
    size_t i;

    for (i = 0; i < sizeof(str_flags) / sizeof(str_flags[0]); i++)
        vals[i] = flag_or_env(*str_field((cli_common *)common, i),
                              str_flags[i].env);
    if (vals[0]) {
        if (strlen(vals[0]) > RB_URL_USER_MAX)
            return cli_error(err, "--user is longer than %d bytes",
                             RB_URL_USER_MAX);
        memcpy(url->user, vals[0], strlen(vals[0]) + 1);
    }
    memset(&tls, 0, sizeof(tls));
    tls.cacert = vals[1];
    tls.cacertdir = vals[2];
    tls.cert = vals[3];
    tls.key = vals[4];
    tls.sni = vals[5];
    ins = getenv("RBARRIER_INSECURE");
    if (common->insecure->count) {
        setenv("RBARRIER_INSECURE", "1", 1);
        tls.insecure = 1;
    } else if (ins && ins[0] && strcmp(ins, "0") != 0) {
        if (strcmp(ins, "1") != 0)
            return cli_error(err, "$RBARRIER_INSECURE must be 1 or 0");
        tls.insecure = 1;
    }
    /* TLS flags with a plain URL: most likely a forgotten 's', and the
     * connection would go out in clear text. (Variables may be set for
     * other uses, so only flags count.) */
    if (!url->tls) {
        for (i = 1; i < sizeof(str_flags) / sizeof(str_flags[0]); i++)
            if ((*str_field((cli_common *)common, i))->count)
                return cli_error(err, "--%s needs a rediss:// or "
                                 "rediss-sentinel:// URL", str_flags[i].name);
        if (common->insecure->count)
            return cli_error(err, "--insecure needs a rediss:// or "
                             "rediss-sentinel:// URL");
        return RB_OK;
    }
    if (check_path(common, 1, tls.cacert, 0, err) != RB_OK ||
        check_path(common, 2, tls.cacertdir, 1, err) != RB_OK ||
        check_path(common, 3, tls.cert, 0, err) != RB_OK ||
        check_path(common, 4, tls.key, 0, err) != RB_OK)
        return RB_EINVAL;
    return RB_OK;
}

const rb_tls_opts *cli_connopts_tls(const rb_url *url)
{
    if (!url->tls)
        return NULL;
    if (tls.insecure && !insecure_warned) {
        insecure_warned = 1;
        cli_say("warning: --insecure: the server's TLS certificate is not "
                "checked; anyone on the path can read and change this "
                "connection");
    }
    return &tls;
}

/* The string value of the table's --LONG option, or NULL. */
static const char *table_value(void **table, const char *a, const char *b)
{
    struct arg_hdr **hdr = (struct arg_hdr **)table;

    for (; !((*hdr)->flag & ARG_TERMINATOR); hdr++) {
        const char *lo = (*hdr)->longopts;

        /* Every --name/--param/--id/--worker is an arg_str (it has a
         * datatype; an arg_lit has none). */
        if (lo && (strcmp(lo, a) == 0 || strcmp(lo, b) == 0) &&
            (*hdr)->datatype != NULL) {
            struct arg_str *s = (struct arg_str *)(*hdr)->parent;

            return s->count ? s->sval[0] : NULL;
        }
    }
    return NULL;
}

/* Append s, percent-encoding what CLIENT SETNAME refuses (anything but
 * '!'..'~') and '%' itself, so any valid barrier name still names the
 * connection. */
static void put_name_part(char *out, size_t len, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = strlen(out);

    for (; *s && o + 4 < len; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch > ' ' && ch <= '~' && ch != '%') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
}

void cli_connopts_name(void **table, const char *cmd)
{
    const char *name = table_value(table, "name", "param");
    const char *id = table_value(table, "id", "worker");
    char def[192];

    if (id == NULL) {
        cli_default_id(def, sizeof(def));
        id = def;
    }
    snprintf(client_name, sizeof(client_name), "rbarrier:");
    put_name_part(client_name, sizeof(client_name), cmd);
    put_name_part(client_name, sizeof(client_name), ":");
    put_name_part(client_name, sizeof(client_name), name ? name : "-");
    put_name_part(client_name, sizeof(client_name), ":");
    put_name_part(client_name, sizeof(client_name), id);
}

const char *cli_connopts_client_name(void)
{
    return client_name[0] ? client_name : NULL;
}
