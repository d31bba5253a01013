/* The embedded script table: ids match names, SHA1s are well formed, and
 * each script names its keys in its header. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "rb_script.h"

static void test_scripts_ids_match_names(void **state)
{
    static const char *const names[RB_SCRIPT__COUNT] = {
        "abandon", "arrive", "claim", "expect-store", "heartbeat", "job-end",
        "job-enter", "job-keep", "job-reset", "job-status", "job-stop",
        "lock-acquire", "lock-release", "lock-renew", "lock-reset",
        "lock-status", "release", "reset", "set", "status", "sync", "train",
        "withdraw",
    };
    size_t i;

    (void)state;
    assert_int_equal(rb_scripts_count, RB_SCRIPT__COUNT);
    for (i = 0; i < RB_SCRIPT__COUNT; i++)
        assert_string_equal(rb_scripts[i].name, names[i]);
}

static void test_scripts_well_formed(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < rb_scripts_count; i++) {
        const rb_script *s = &rb_scripts[i];

        assert_int_equal(strlen(s->sha1), 40);
        assert_int_equal(strspn(s->sha1, "0123456789abcdef"), 40);
        assert_int_equal(strlen(s->source), s->length);
        assert_in_range(s->numkeys, 1, 4);
        assert_non_null(strstr(s->source, "KEYS[1]"));
        assert_non_null(strstr(s->source, "Returns"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scripts_ids_match_names),
        cmocka_unit_test(test_scripts_well_formed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
