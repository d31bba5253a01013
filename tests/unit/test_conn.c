/* The node and the resend loop against a scripted stand-in server on a
 * unix socket (a forked child): the handshake goes out in one write (with
 * the first command when no AUTH or SELECT gates it), each
 * "not now" reply is resent, an error reply is final, an EXACT deadline
 * ends a call that gets no reply at that deadline, and a first connection
 * cut during its handshake is tried again while nobody listening fails at
 * once. */
#include "fmacros.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rb_internal.h"
#include "rb_support.h"

static char sock_path[108];
static char log_path[128];

/* The stand-in: on each connection, answer each read with the next entry
 * of replies ("" : stay silent; CUT: close the connection instead), and log
 * what each read held, one line per read with its command count (lines
 * starting with '*'). */
#define CUT "\x01cut"

/* The stand-in's socket and log paths, with nothing there yet. */
static void fresh_paths(void)
{
    snprintf(sock_path, sizeof(sock_path), "/tmp/rb-test-conn-%d.sock",
             (int)getpid());
    snprintf(log_path, sizeof(log_path), "/tmp/rb-test-conn-%d.log",
             (int)getpid());
    unlink(sock_path);
    unlink(log_path);
}

static pid_t serve(const char *const *replies, int count)
{
    struct sockaddr_un sun;
    int l;
    pid_t pid;

    fresh_paths();
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    strcpy(sun.sun_path, sock_path);
    l = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
    assert_int_equal(listen(l, 8), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int next = 0;

        /* A failed assertion in the test skips stop(): do not outlive it
         * (an orphan holding the runner's pipe would hang make unit). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(0);

        for (;;) {
            int c = accept(l, NULL, NULL);
            char buf[65536];
            ssize_t n;

            if (c < 0)
                _exit(0);
            while ((n = read(c, buf, sizeof(buf) - 1)) > 0) {
                FILE *f = fopen(log_path, "a");
                int cmds = 0;
                ssize_t i;

                buf[n] = '\0';
                for (i = 0; i < n; i++)
                    if (buf[i] == '*' && (i == 0 || buf[i - 1] == '\n'))
                        cmds++;
                if (f) {
                    fprintf(f, "%d %s\n", cmds,
                            strstr(buf, "SETNAME") ? "hello" : "call");
                    fclose(f);
                }
                if (next < count && strcmp(replies[next], CUT) == 0) {
                    next++;
                    break;
                }
                if (next < count && replies[next][0] &&
                    write(c, replies[next], strlen(replies[next])) < 0)
                    _exit(1);
                next++;
            }
            close(c);
        }
    }
    close(l);
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(sock_path);
    unlink(log_path);
}

static rb_conn *open_conn(void)
{
    char text[160];
    rb_url *url;
    rb_conn *c = NULL;
    rb_conn_opts o = RB_CONN_OPTS_INIT;
    rb_error err;

    snprintf(text, sizeof(text), "unix://%s?db=3", sock_path);
    assert_int_equal(rb_url_parse(&url, text, &err), RB_OK);
    assert_int_equal(rb_url_set_password(url, "pw", &err), RB_OK);
    o.client_name = "rbarrier:test";
    assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_OK);
    /* The handle copied what it needs: the URL may go now. */
    rb_url_free(url);
    return c;
}

static int ping(rb_conn *c, rb_deadline d, redisReply **r, rb_error *err)
{
    const char *argv[1] = { "PING" };
    size_t lens[1] = { 4 };
    rb_call call = { .deadline = d };

    return rb_conn__call(c, 1, argv, lens, &call, r, err);
}

static void test_handshake_one_write_and_not_now(void **state)
{
    static const char *const replies[] = {
        "+OK\r\n+OK\r\n+OK\r\n",      /* AUTH, SELECT, CLIENT SETNAME */
        "-LOADING Redis is loading the dataset in memory\r\n",
        "-BUSY Redis is busy running a script\r\n",
        "+PONG\r\n",
        "-ERR no such thing\r\n",
    };
    pid_t pid = serve(replies, 5);
    rb_conn *c = open_conn();
    redisReply *r = NULL;
    rb_error err;
    FILE *f;
    char line[64];

    (void)state;
    /* LOADING and BUSY are "not now": resent until the deadline allows. */
    assert_int_equal(ping(c, rb_deadline__within(rb_now_ms(), 5000), &r,
                          &err), RB_OK);
    assert_string_equal(r->str, "PONG");
    freeReplyObject(r);
    /* Any other error reply is final, with the server's text. */
    assert_int_equal(ping(c, rb_deadline__within(rb_now_ms(), 5000), &r,
                          &err), RB_EREDIS);
    assert_string_equal(err.msg, "ERR no such thing");
    rb_conn_free(c);
    f = fopen(log_path, "r");
    assert_non_null(f);
    /* AUTH, SELECT and CLIENT SETNAME arrived in one read. */
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "3 hello\n");
    fclose(f);
    stop(pid);
}

static void test_once_is_not_resent(void **state)
{
    static const char *const replies[] = {
        "+OK\r\n+OK\r\n+OK\r\n",
        "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
        "+PONG\r\n",
    };
    pid_t pid = serve(replies, 3);
    rb_conn *c = open_conn();
    redisReply *r = NULL;
    rb_error err;

    (void)state;
    assert_int_equal(ping(c, rb_deadline__once(), &r, &err),
                     RB_EUNREACHABLE);
    assert_non_null(strstr(err.msg, "TRYAGAIN"));
    assert_int_equal(ping(c, rb_deadline__once(), &r, &err), RB_OK);
    freeReplyObject(r);
    rb_conn_free(c);
    stop(pid);
}

static void test_exact_deadline(void **state)
{
    static const char *const replies[] = {
        "+OK\r\n+OK\r\n+OK\r\n",
        "",                          /* never answers the call */
    };
    pid_t pid = serve(replies, 2);
    rb_conn *c = open_conn();
    redisReply *r = NULL;
    rb_error err;
    long long t0, took;
    int rc;

    (void)state;
    assert_int_equal(rb_conn_connect(c, rb_now_ms() + 5000, &err), RB_OK);
    t0 = rb_now_ms();
    rc = ping(c, rb_deadline__exact(t0 + 300), &r, &err);
    took = rb_now_ms() - t0;
    rb_conn_free(c);
    stop(pid);
    assert_int_equal(rc, RB_ETIMEOUT);
    /* Cut at the deadline by the client's clock: not before it, and not
     * after the 5 s command timeout a silent server would otherwise cost
     * (the bound leaves room for memcheck on a loaded machine; the 20 ms
     * precision of wait --timeout is tests/integration/t_timeout.sh's). */
    assert_true(took >= 300);
    assert_true(took < 1000);
}

static int log_lines(void)
{
    FILE *f = fopen(log_path, "r");
    char line[64];
    int n = 0;

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f))
        n++;
    fclose(f);
    return n;
}

static void test_cut_first_connection_is_retried(void **state)
{
    static const char *const replies[] = {
        CUT,                          /* the handshake read, then closed */
        "+OK\r\n+OK\r\n+OK\r\n",
        "+PONG\r\n",
    };
    pid_t pid = serve(replies, 3);
    rb_conn *c = open_conn();
    redisReply *r = NULL;
    rb_error err;
    int rc;

    (void)state;
    /* No --connect-timeout: a handle that never connected has one
     * attempt, but a server that took the connection is there. */
    rc = ping(c, rb_deadline__once(), &r, &err);
    rb_conn_free(c);
    assert_int_equal(rc, RB_OK);
    assert_string_equal(r->str, "PONG");
    freeReplyObject(r);
    assert_int_equal(log_lines(), 3);
    stop(pid);
}

static void test_always_cut_fails_after_a_few_tries(void **state)
{
    const char *replies[64];
    pid_t pid;
    rb_conn *c;
    redisReply *r = NULL;
    rb_error err;
    int rc, tries, i;

    (void)state;
    for (i = 0; i < 64; i++)
        replies[i] = CUT;
    pid = serve(replies, 64);
    c = open_conn();
    rc = ping(c, rb_deadline__once(), &r, &err);
    rb_conn_free(c);
    tries = log_lines();
    stop(pid);
    assert_int_equal(rc, RB_EUNREACHABLE);
    assert_non_null(strstr(err.msg, "connection"));
    /* Tried again, for a moment (RB_CUT_RETRY_MS), not for ever. How
     * many times fits in that moment depends on the machine's load, so
     * only "again" and "not for ever" are asserted. */
    assert_true(tries >= 2);
    assert_true(tries < 64);
}

static void test_nobody_listening_fails_at_once(void **state)
{
    rb_conn *c;
    redisReply *r = NULL;
    rb_error err;
    long long t0, took;
    int rc;

    (void)state;
    fresh_paths();                    /* no socket file: nobody listens */
    c = open_conn();
    t0 = rb_now_ms();
    rc = ping(c, rb_deadline__once(), &r, &err);
    took = rb_now_ms() - t0;
    rb_conn_free(c);
    assert_int_equal(rc, RB_EUNREACHABLE);
    /* Not tried again: a cut connection would be, for 2 s. */
    assert_true(took < 1000);
}

/* A stand-in that never finishes its reply: after the first read it writes
 * head, then drip every interval_ms, for as long as the client listens. */
static pid_t serve_unfinished(const char *head, const char *drip,
                              int interval_ms)
{
    struct sockaddr_un sun;
    int l;
    pid_t pid;

    fresh_paths();
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    strcpy(sun.sun_path, sock_path);
    l = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
    assert_int_equal(listen(l, 8), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(0);
        for (;;) {
            int c = accept(l, NULL, NULL);
            char buf[4096];

            if (c < 0)
                _exit(0);
            if (read(c, buf, sizeof(buf)) > 0 &&
                write(c, head, strlen(head)) >= 0) {
                while (drip[0] && write(c, drip, strlen(drip)) > 0)
                    if (interval_ms > 0)
                        usleep((useconds_t)interval_ms * 1000);
                /* Silence: hold the connection until the client drops it. */
                while (read(c, buf, sizeof(buf)) > 0)
                    ;
            }
            close(c);
        }
    }
    close(l);
    return pid;
}

/* Whatever the reply looks like, the wait for it ends by the call's
 * deadline (plus the reply grace): an endless status line, a trickle of
 * bytes, a bulk header and then silence. */
static void test_unfinished_reply_ends_by_deadline(void **state)
{
    static char flood[4097];
    static const struct {
        const char *what, *head, *drip;
        int interval_ms;
    } cases[] = {
        /* Data that never stops: the reader always finds more to read,
         * so the deadline must be checked between reads, not in poll. */
        { "endless status line, without a pause", "+", flood, 0 },
        { "endless status line", "+", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 5 },
        { "trickle", "+O", "K", 100 },
        { "bulk header, then silence", "$100\r\nab", "", 0 },
        { "array header, then silence", "*3\r\n:1\r\n", "", 0 },
    };
    size_t i;

    (void)state;
    memset(flood, 'a', sizeof(flood) - 1);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[160];
        rb_url *url;
        rb_conn *c = NULL;
        rb_conn_opts o = RB_CONN_OPTS_INIT;
        redisReply *r = NULL;
        rb_error err;
        pid_t pid = serve_unfinished(cases[i].head, cases[i].drip,
                                     cases[i].interval_ms);
        long long t0, took;
        int rc;

        snprintf(text, sizeof(text), "unix://%s", sock_path);
        assert_int_equal(rb_url_parse(&url, text, &err), RB_OK);
        /* A long command timeout: only the deadline may end the wait. */
        o.command_timeout_ms = 60000;
        assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_OK);
        rb_url_free(url);
        t0 = rb_now_ms();
        rc = ping(c, rb_deadline__within(t0, 1000), &r, &err);
        took = rb_now_ms() - t0;
        rb_conn_free(c);
        stop(pid);
        if (rc != RB_EUNREACHABLE)
            fail_msg("%s: rc %d (%s)", cases[i].what, rc, err.msg);
        /* The deadline (1 s) plus RB_REPLY_GRACE_MS, with room for a
         * loaded machine or memcheck; 60 s would mean it was not bounded. */
        if (took < 1000 || took > 1000 + RB_REPLY_GRACE_MS + 5000)
            fail_msg("%s: ended after %lld ms", cases[i].what, took);
        if (strstr(err.msg, "no reply") == NULL)
            fail_msg("%s: '%s'", cases[i].what, err.msg);
    }
}

/* A reply the reader refuses (an array longer than any Redis sends) ends
 * the call at once as a protocol error, not by the deadline. */
static void test_huge_bulk_refused(void **state)
{
    char text[160];
    rb_url *url;
    rb_conn *c = NULL;
    redisReply *r = NULL;
    rb_error err;
    pid_t pid = serve_unfinished("*99999999999999\r\n", "", 0);
    long long t0, took;
    int rc;

    (void)state;
    snprintf(text, sizeof(text), "unix://%s", sock_path);
    assert_int_equal(rb_url_parse(&url, text, &err), RB_OK);
    assert_int_equal(rb_conn_new(&c, url, NULL, &err), RB_OK);
    rb_url_free(url);
    t0 = rb_now_ms();
    rc = ping(c, rb_deadline__within(t0, 20000), &r, &err);
    took = rb_now_ms() - t0;
    rb_conn_free(c);
    stop(pid);
    assert_int_equal(rc, RB_EPROTO);
    assert_true(took < 10000);
}

/* An options struct of a version this library does not know is refused
 * before anything is set up (a program built against a newer header). */
static void test_unknown_opts_version_refused(void **state)
{
    rb_url *url;
    rb_conn *c = NULL;
    rb_conn_opts o = RB_CONN_OPTS_INIT;
    rb_tls_opts t = RB_TLS_OPTS_INIT;
    rb_error err;

    (void)state;
    assert_int_equal(o.version, RB_CONN_OPTS_VERSION);
    assert_int_equal(rb_url_parse(&url, "redis://127.0.0.1:1", &err), RB_OK);
    o.version = RB_CONN_OPTS_VERSION + 1;
    assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_EINVAL);
    assert_null(c);
    assert_non_null(strstr(err.msg, "version"));
    o.version = 0;
    assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_EINVAL);
    rb_url_free(url);
    /* The TLS options too, for a rediss:// URL. */
    assert_int_equal(rb_url_parse(&url, "rediss://127.0.0.1:1", &err),
                     RB_OK);
    o = (rb_conn_opts)RB_CONN_OPTS_INIT;
    t.version = 0;
    o.tls = &t;
    assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_EINVAL);
    assert_null(c);
    t = (rb_tls_opts)RB_TLS_OPTS_INIT;
    assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_OK);
    rb_url_free(url);
    rb_conn_free(c);
}

static void test_version_and_strerror(void **state)
{
    char want[32];
    int code;

    (void)state;
    snprintf(want, sizeof(want), "%d.%d.%d", RB_VERSION_MAJOR,
             RB_VERSION_MINOR, RB_VERSION_PATCH);
    assert_string_equal(rb_version(), want);
    assert_string_equal(RB_VERSION, want);
    for (code = RB_EPROTO; code <= RB_OK; code++) {
        assert_non_null(rb_strerror(code));
        assert_string_not_equal(rb_strerror(code), "unknown error code");
    }
    assert_string_equal(rb_strerror(RB_EPROTO - 1), "unknown error code");
    assert_string_equal(rb_strerror(1), "unknown error code");
}

/* Without AUTH or SELECT nothing gates the first command, so the rest of
 * the hello (CLIENT SETNAME) rides in its write: one round trip, not two. */
static void test_hello_rides_with_first_command(void **state)
{
    static const char *const replies[] = {
        "+PONG\r\n+OK\r\n",          /* PING, then CLIENT SETNAME */
        "+PONG\r\n",
    };
    pid_t pid = serve(replies, 2);
    char text[160];
    rb_url *url;
    rb_conn *c = NULL;
    rb_conn_opts o = RB_CONN_OPTS_INIT;
    redisReply *r = NULL;
    rb_error err;
    FILE *f;
    char line[64];

    (void)state;
    snprintf(text, sizeof(text), "unix://%s", sock_path);
    assert_int_equal(rb_url_parse(&url, text, &err), RB_OK);
    o.client_name = "rbarrier:test";
    assert_int_equal(rb_conn_new(&c, url, &o, &err), RB_OK);
    rb_url_free(url);   /* the handle keeps what it needs */
    assert_int_equal(ping(c, rb_deadline__once(), &r, &err), RB_OK);
    assert_string_equal(r->str, "PONG");
    freeReplyObject(r);
    /* The name is said once per connection, not with every command. */
    assert_int_equal(ping(c, rb_deadline__once(), &r, &err), RB_OK);
    freeReplyObject(r);
    rb_conn_free(c);
    f = fopen(log_path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "2 hello\n");
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "1 call\n");
    fclose(f);
    stop(pid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake_one_write_and_not_now),
        cmocka_unit_test(test_once_is_not_resent),
        cmocka_unit_test(test_exact_deadline),
        cmocka_unit_test(test_cut_first_connection_is_retried),
        cmocka_unit_test(test_always_cut_fails_after_a_few_tries),
        cmocka_unit_test(test_nobody_listening_fails_at_once),
        cmocka_unit_test(test_unfinished_reply_ends_by_deadline),
        cmocka_unit_test(test_huge_bulk_refused),
        cmocka_unit_test(test_unknown_opts_version_refused),
        cmocka_unit_test(test_version_and_strerror),
        cmocka_unit_test(test_hello_rides_with_first_command),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
