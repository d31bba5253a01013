/* examples/embed.c: a program that meets other parties at an rbarrier
 * barrier in-process, through the installed library.
 *
 * Build against an installed rbarrier (make install):
 *
 *   cc -o embed examples/embed.c $(pkg-config --cflags --libs rbarrier)
 *
 * Run it with the CLI as the other party:
 *
 *   ./embed redis://127.0.0.1:6379/0 ckpt 2 embed-party 3 &
 *   for i in 1 2 3; do rbarrier wait --name ckpt --n 2 --id cli; done
 *
 * usage: embed URL NAME N ID [ROUNDS]
 * Prints one line per round passed; exits as `rbarrier wait` would: 0 all
 * rounds passed, 1 Redis error, 2 bad input, 3 round broken, 4 Redis
 * unreachable, 124 own timeout. */
#include <stdio.h>
#include <stdlib.h>

#include <rbarrier.h>

static int exit_code(int rc)
{
    switch (rc) {
    case RB_OK: return 0;
    case RB_EINVAL: return 2;
    case RB_EBROKEN: return 3;
    case RB_EUNREACHABLE: return 4;
    case RB_ETIMEOUT: return 124;
    default: return 1;
    }
}

int main(int argc, char **argv)
{
    rb_url *url = NULL;
    rb_conn_opts copts = RB_CONN_OPTS_INIT;
    rb_wait_opts wopts = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_conn *conn = NULL;
    rb_error err;
    long rounds = 1, i;
    int rc;

    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: embed URL NAME N ID [ROUNDS]\n");
        return 2;
    }
    wopts.name = argv[2];
    wopts.n = strtol(argv[3], NULL, 10);
    wopts.id = argv[4];
    wopts.timeout_ms = 60000;
    if (argc == 6)
        rounds = strtol(argv[5], NULL, 10);

    /* Built against one header, run against whatever library is
     * installed: a different major version would not even have loaded. */
    if (RB_VERSION_MAJOR != 2) {
        fprintf(stderr, "embed: written for rbarrier 2.x, not %s\n",
                rb_version());
        return 2;
    }
    /* Every call fills err with one line; the library never prints. The
     * options were declared with their _INIT macros, which set the version
     * field a newer library checks. */
    if ((rc = rb_url_parse(&url, argv[1], &err)) != RB_OK ||
        (rc = rb_check_name(wopts.name, "name", &err)) != RB_OK ||
        (rc = rb_check_id(wopts.id, "id", &err)) != RB_OK ||
        (rc = rb_conn_new(&conn, url, &copts, &err)) != RB_OK) {
        fprintf(stderr, "embed: %s (%s)\n", err.msg, rb_strerror(rc));
        rb_url_free(url);
        return exit_code(rc);
    }
    /* The handle copied what it needs of the URL. */
    rb_url_free(url);
    for (i = 0; i < rounds; i++) {
        rc = rb_barrier_wait(&res, conn, &wopts, &err);
        if (rc != RB_OK) {
            fprintf(stderr, "embed: %s\n", err.msg);
            break;
        }
        printf("embed: %s round %lld passed (%ld parties)\n", wopts.name,
               res.gen, res.n);
        fflush(stdout);
    }
    rb_conn_free(conn);
    return exit_code(rc);
}
