/*
 * The connection flags beyond the URL: the ACL user (--user), TLS
 * (redis-cli's --cacert, --cacertdir, --cert, --key, --sni, --insecure),
 * and the name each connection gives itself in CLIENT LIST. Each flag can
 * also come from an RBARRIER_* variable; a flag given on the command line
 * is exported as its variable, so the processes rbarrier starts (demo's
 * workers) connect the same way without the settings in their argv. What
 * the values mean is decided in config.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *cli_connopts_value(const cli_common *common, size_t i,
                               const char **origin)
{
    struct arg_str *a = *str_field((cli_common *)common, i);
    const char *v;

    if (a->count) {
        /* Exported, so the processes rbarrier starts connect the same
         * way without the setting in their argv. */
        setenv(str_flags[i].env, a->sval[0], 1);
        *origin = str_flags[i].name;
        return a->sval[0];
    }
    v = getenv(str_flags[i].env);
    *origin = str_flags[i].env;
    return v && v[0] ? v : NULL;
}

int cli_connopts_given(const cli_common *common, size_t i)
{
    return (*str_field((cli_common *)common, i))->count > 0;
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
