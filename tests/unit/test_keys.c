/* The key layout and the cluster slot function. The expected slots in
 * keyslots.txt were answered by CLUSTER KEYSLOT of a redis-server 7.0
 * (tests/integration/t_keys.sh asks a live cluster-mode server again). */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rb_internal.h"

#ifndef KEYSLOTS_FILE
#define KEYSLOTS_FILE "tests/unit/keyslots.txt"
#endif

static void test_slot_matches_cluster_keyslot(void **state)
{
    FILE *f = fopen(KEYSLOTS_FILE, "r");
    char line[1024];
    int checked = 0;

    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        char *key = strchr(line, ' ');
        unsigned want;

        assert_non_null(key);
        *key++ = '\0';
        key[strcspn(key, "\n")] = '\0';
        want = (unsigned)strtoul(line, NULL, 10);
        if (rb_key__slot(key, strlen(key)) != want)
            fail_msg("slot of '%s': got %u, CLUSTER KEYSLOT says %u", key,
                     rb_key__slot(key, strlen(key)), want);
        checked++;
    }
    fclose(f);
    assert_true(checked >= 20);
}

static void test_slot_binary_safe(void **state)
{
    (void)state;
    /* A NUL inside the tag counts: the length, not strlen, bounds it. */
    assert_int_not_equal(rb_key__slot("{a\0b}", 5), rb_key__slot("{a}", 3));
    assert_int_equal(rb_key__slot("", 0), 0);
}

static void test_barrier_keys(void **state)
{
    char base[RB_KEY_MAX], in[RB_KEY_MAX], out[RB_KEY_MAX], nonce[RB_KEY_MAX];
    const char *keys[4] = { base, in, out, nonce };
    rb_error err;

    (void)state;
    assert_int_equal(rb_key__barrier(base, sizeof(base), NULL, "ckpt", &err),
                     RB_OK);
    assert_string_equal(base, "rb:b:{ckpt}");
    assert_int_equal(rb_key__round(in, sizeof(in), base, 12, "in", &err),
                     RB_OK);
    assert_string_equal(in, "rb:b:{ckpt}:12:in");
    assert_int_equal(rb_key__round(out, sizeof(out), base, 12, "out", &err),
                     RB_OK);
    assert_string_equal(out, "rb:b:{ckpt}:12:out");
    assert_int_equal(rb_key__nonces(nonce, sizeof(nonce), base, &err), RB_OK);
    assert_string_equal(nonce, "rb:b:{ckpt}:nonce");
    assert_true(rb_key__same_slot(keys, 4));
    assert_int_equal(rb_key__barrier(base, sizeof(base), "p", "x", &err),
                     RB_OK);
    assert_string_equal(base, "p:b:{x}");
    assert_int_equal(rb_key__barrier(base, 8, "prefix", "long", &err),
                     RB_EINVAL);
}

static void test_param_keys(void **state)
{
    char g[RB_KEY_MAX], l[RB_KEY_MAX], t[RB_KEY_MAX];
    const char *keys[3] = { g, l, t };
    rb_error err;

    (void)state;
    assert_int_equal(rb_key__param(g, l, t, RB_KEY_MAX, NULL, "global", "w0",
                                   &err), RB_OK);
    assert_string_equal(g, "rb:p:{global}");
    assert_string_equal(l, "rb:p:{global}:local:w0");
    assert_string_equal(t, "rb:p:{global}:local:w0:train");
    assert_true(rb_key__same_slot(keys, 3));
}

/* One family per kind: a barrier named like a parameter's old key never
 * reaches the parameter's keys. */
static void test_kinds_never_share_keys(void **state)
{
    char b[RB_KEY_MAX], g[RB_KEY_MAX];
    rb_error err;

    (void)state;
    assert_int_equal(rb_key__barrier(b, sizeof(b), NULL, "param:P", &err),
                     RB_OK);
    assert_int_equal(rb_key__param(g, NULL, NULL, RB_KEY_MAX, NULL, "P", NULL,
                                   &err), RB_OK);
    assert_string_equal(b, "rb:b:{param:P}");
    assert_string_equal(g, "rb:p:{P}");
    assert_int_equal(rb_key__barrier(b, sizeof(b), NULL, "P", &err), RB_OK);
    assert_string_not_equal(b, g);
}

/* A name's history shares the slot of its barrier, job and lock (every
 * script appends to it), in a family of its own. */
static void test_history_keys(void **state)
{
    char b[RB_KEY_MAX], j[RB_KEY_MAX], l[RB_KEY_MAX], h[RB_KEY_MAX];
    char n[RB_KEY_MAX];
    const char *keys[5] = { b, j, l, h, n };
    rb_error err;

    (void)state;
    assert_int_equal(rb_key__barrier(b, sizeof(b), NULL, "ckpt", &err), RB_OK);
    assert_int_equal(rb_key__job(j, sizeof(j), NULL, "ckpt", &err), RB_OK);
    assert_int_equal(rb_key__lock(l, sizeof(l), NULL, "ckpt", &err), RB_OK);
    assert_int_equal(rb_key__history(h, sizeof(h), NULL, "ckpt", "", &err),
                     RB_OK);
    assert_string_equal(h, "rb:h:{ckpt}");
    assert_int_equal(rb_key__history(n, sizeof(n), "app", "ckpt", ":n", &err),
                     RB_OK);
    assert_string_equal(n, "app:h:{ckpt}:n");
    assert_true(rb_key__same_slot(keys, 5));
    assert_int_equal(rb_key__history(h, 10, NULL, "ckpt", "", &err),
                     RB_EINVAL);
}

static void test_ttl_seconds(void **state)
{
    (void)state;
    assert_int_equal(rb_key__ttl_s(0), 86400);
    assert_int_equal(rb_key__ttl_s(-5), 86400);
    assert_int_equal(rb_key__ttl_s(1), 1);
    assert_int_equal(rb_key__ttl_s(1000), 1);
    assert_int_equal(rb_key__ttl_s(1001), 2);
    assert_int_equal(rb_key__ttl_s(1000000000000000LL), 1000000000);
}

static void test_same_slot_refuses_spread(void **state)
{
    const char *keys[2] = { "rb:{a}", "rb:{b}" };

    (void)state;
    assert_int_not_equal(rb_key__slot("rb:{a}", 6), rb_key__slot("rb:{b}", 6));
    assert_false(rb_key__same_slot(keys, 2));
    assert_true(rb_key__same_slot(keys, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_matches_cluster_keyslot),
        cmocka_unit_test(test_slot_binary_safe),
        cmocka_unit_test(test_barrier_keys),
        cmocka_unit_test(test_param_keys),
        cmocka_unit_test(test_same_slot_refuses_spread),
        cmocka_unit_test(test_kinds_never_share_keys),
        cmocka_unit_test(test_ttl_seconds),
        cmocka_unit_test(test_history_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
