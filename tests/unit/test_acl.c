/* Least privilege: ACL refusals become one line naming what to grant, and
 * the command list stays the README's line and covers every command the
 * scripts call. Run from the source tree's root (make unit does). */
#include "fmacros.h"

#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rb_acl.h"
#include "rb_reply.h"

static void explain(const char *reply, int argc, const char **argv,
                    const char *needle)
{
    rb_error err = { 0, "untouched" };
    size_t lens[8];
    int i;

    for (i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    assert_int_equal(rb_acl__explain(&err, rb_reply__classify(reply), reply,
                                     argc, argv, lens),
                     RB_EREDIS);
    assert_int_equal(err.code, RB_EREDIS);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("'%s' -> '%s' lacks '%s'", reply, err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
}

static void test_acl_command(void **state)
{
    const char *argv[] = { "EVALSHA", "abc", "1", "rb:b:{x}", "a" };

    (void)state;
    explain("NOPERM this user has no permissions to run the 'evalsha' "
            "command", 5, argv, "grant the user +evalsha");
    explain("NOPERM this user has no permissions to run the "
            "'client|setname' command", 5, argv, "+client|setname");
    explain("ERR The user executing the script can't run this command or "
            "subcommand script: 872b, on @user_script:1.", 5, argv,
            RB_ACL_COMMANDS);
}

static void test_acl_keys(void **state)
{
    const char *eval[] = { "EVALSHA", "abc", "2", "jobs:{ckpt}",
                           "jobs:{ckpt}:7:in", "w0" };
    const char *get[] = { "GET", "rb:p:{lr}" };
    const char *odd[] = { "GET", "plain" };

    (void)state;
    explain("NOPERM this user has no permissions to access one of the keys "
            "used as arguments", 6, eval, "grant the user ~jobs:*");
    explain("ERR The user executing the script can't access at least one "
            "of the keys mentioned in the command arguments script: 3b0b, "
            "on @user_script:1.", 6, eval, "~jobs:*");
    explain("NOPERM this user has no permissions to access one of the keys "
            "used as arguments", 2, get, "~rb:*");
    explain("NOPERM this user has no permissions to access one of the keys "
            "used as arguments", 2, odd, "~<prefix>:*");
}

static void test_acl_other_errors(void **state)
{
    rb_error err = { 0, "untouched" };
    const char *argv[] = { "GET", "rb:b:{x}" };
    size_t lens[] = { 3, 6 };

    (void)state;
    assert_int_equal(rb_acl__explain(&err, RB_REPLY_WRONGTYPE,
                                     "WRONGTYPE Operation against a key", 2,
                                     argv, lens), RB_OK);
    assert_string_equal(err.msg, "untouched");
    assert_int_equal(rb_acl__explain(&err, RB_REPLY_NOPERM,
                                     "NOPERM something new", 2, argv, lens), RB_EREDIS);
    assert_non_null(strstr(err.msg, "something new"));
}

/* Whether rule ("+zadd") is a word of list. */
static int has_rule(const char *list, const char *rule)
{
    size_t n = strlen(rule);
    const char *p = list;

    while ((p = strstr(p, rule)) != NULL) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0' ||
                                            p[n] == '\n' || p[n] == '`'))
            return 1;
        p += n;
    }
    return 0;
}

static void test_acl_readme_line(void **state)
{
    FILE *f = fopen("README.md", "r");
    char line[2048], list[] = RB_ACL_COMMANDS, *tok, *save = NULL;
    int found = 0;

    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        if (strstr(line, "ACL SETUSER rbarrier ") != NULL) {
            found = 1;
            break;
        }
    fclose(f);
    assert_true(found);
    for (tok = strtok_r(list, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save))
        if (!has_rule(line, tok))
            fail_msg("README's ACL line lacks %s", tok);
    for (tok = strtok_r(line, " `\n", &save); tok;
         tok = strtok_r(NULL, " `\n", &save))
        if (tok[0] == '+' && !has_rule(RB_ACL_COMMANDS, tok) &&
            strcmp(tok, "+select") != 0)
            fail_msg("README's ACL line grants %s, which rbarrier does not "
                     "use", tok);
}

static void scan_lua(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512], buf[65536];

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        FILE *f;
        size_t n;
        char *p;

        if (strstr(e->d_name, ".lua") == NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        f = fopen(path, "r");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        for (p = buf; (p = strstr(p, "call(")) != NULL; p += 5) {
            char rule[64] = "+";
            size_t i = 1;
            const char *q = p + 5;

            if (*q != '\'' && *q != '"')
                continue;
            for (q++; isalpha((unsigned char)*q) && i + 1 < sizeof(rule);
                 q++)
                rule[i++] = (char)tolower((unsigned char)*q);
            rule[i] = '\0';
            if (!has_rule(RB_ACL_COMMANDS, rule))
                fail_msg("%s calls %s, missing from RB_ACL_COMMANDS", path,
                         rule + 1);
        }
    }
    closedir(d);
}

static void test_acl_covers_scripts(void **state)
{
    (void)state;
    scan_lua("lua");
    scan_lua("lua/includes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acl_command),
        cmocka_unit_test(test_acl_keys),
        cmocka_unit_test(test_acl_other_errors),
        cmocka_unit_test(test_acl_readme_line),
        cmocka_unit_test(test_acl_covers_scripts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
