# make install / make uninstall into a DESTDIR: every file in its place, the
# shared library named and linked as promised, exporting exactly the public
# header's functions; rbarrier.pc carries the header's version;
# examples/embed.c builds against the installed library through pkg-config
# and passes rounds with a CLI party; uninstall leaves no file behind.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
build=${RB_BUILD:-$root/build}
dest=$RB_TEST_TMP/install-$$
# The outer make's command-line variables and jobserver must not leak in.
unset MAKEFLAGS MAKELEVEL MFLAGS
mk() { make -s -C "$root" BUILD="$build" "$@"; }

mk install DESTDIR="$dest" PREFIX=/usr > "$RB_TEST_TMP/install.log" 2>&1
check "make install DESTDIR=... PREFIX=/usr succeeds" test $? -eq 0

version=$(sed -n 's/^.define RB_VERSION "\(.*\)".*/\1/p' "$root/lib/include/rbarrier.h")
major=${version%%.*}
want="usr/bin/rbarrier
usr/include/rbarrier.h
usr/include/rbarrier/barrier.h
usr/include/rbarrier/job.h
usr/include/rbarrier/lock.h
usr/lib/librbarrier.a
usr/lib/librbarrier.so
usr/lib/librbarrier.so.$major
usr/lib/librbarrier.so.$version
usr/lib/pkgconfig/rbarrier.pc
usr/share/bash-completion/completions/rbarrier
usr/share/man/man1/rbarrier.1"
got=$(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
expect_eq "installed files" "$want" "$got"

lib=$dest/usr/lib
expect_eq "librbarrier.so -> .so.$major" "librbarrier.so.$major" "$(readlink "$lib/librbarrier.so")"
expect_eq "librbarrier.so.$major -> .so.$version" "librbarrier.so.$version" \
    "$(readlink "$lib/librbarrier.so.$major")"
expect_match "soname is librbarrier.so.$major" "\(SONAME\).*\[librbarrier\.so\.$major\]" \
    "$(readelf -d "$lib/librbarrier.so.$version")"
check "the binary is executable and reports the version" \
    test "$("$dest/usr/bin/rbarrier" --version)" = "rbarrier $version"

# Exactly the header's functions, no internal helper and nothing else.
public=$(cd "$root" && sh tools/public-symbols.sh "${RB_CC:-cc}")
exported=$(nm -D --defined-only "$lib/librbarrier.so.$version" | awk '{print $3}' |
           sed 's/@.*//' | sort -u)
expect_eq "nm -D exports exactly the public header's functions" "$public" "$exported"
check "the public header declares some functions" test "$(echo "$public" | wc -l)" -ge 10

pc=$dest/usr/lib/pkgconfig
expect_eq "rbarrier.pc version is the header's" "$version" \
    "$(PKG_CONFIG_PATH=$pc pkg-config --modversion rbarrier)"
expect_eq "pkg-config --libs into the DESTDIR" "-L$dest/usr/lib -lrbarrier" \
    "$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --libs rbarrier | sed 's/ *$//')"
expect_eq "rbarrier.pc prefix" "/usr" \
    "$(PKG_CONFIG_PATH=$pc pkg-config --variable=prefix rbarrier)"

# examples/embed.c, built as a user would: pkg-config into the DESTDIR, the
# shared library found by the loader there. (Sanitizer flags of this build
# are passed on, since the installed library carries them.)
export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest
embed=$RB_TEST_TMP/embed-$$
# shellcheck disable=SC2046,SC2086 # pkg-config output is split on purpose
${RB_CC:-cc} -std=c99 -Wall -Wextra -Werror ${RB_CFLAGS:-} -o "$embed" "$root/examples/embed.c" \
    $(pkg-config --cflags --libs rbarrier) ${RB_LDFLAGS:-} 2> "$RB_TEST_TMP/embed.log"
check "examples/embed.c builds with pkg-config --cflags --libs rbarrier" test -x "$embed"
# The static library with what `pkg-config --static` adds: OpenSSL is not
# among it (the library loads libssl itself, for rediss:// only).
static=$RB_TEST_TMP/embed-static-$$
# shellcheck disable=SC2046,SC2086 # pkg-config output is split on purpose
${RB_CC:-cc} -std=c99 -Wall -Wextra -Werror ${RB_CFLAGS:-} -o "$static" "$root/examples/embed.c" \
    $(pkg-config --cflags rbarrier) "$lib/librbarrier.a" \
    $(pkg-config --static --libs-only-l rbarrier | sed 's/-lrbarrier//') ${RB_LDFLAGS:-} \
    2> "$RB_TEST_TMP/embed-static.log"
check "examples/embed.c links librbarrier.a with pkg-config --static --libs" test -x "$static"
expect_eq "rbarrier.pc requires no OpenSSL" "hiredis" \
    "$(pkg-config --print-requires-private rbarrier | tr -d ' \n')"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
expect_eq "... and the static embed links no libssl, libcrypto or librbarrier" "" \
    "$(readelf -d "$static" | grep NEEDED | grep -E 'lib(ssl|crypto|rbarrier)\.so')"
"$static" "$RB_URL" "$(fresh embed-static)" 1 embed 1 > /dev/null 2> "$RB_TEST_TMP/embed-static.err"
expect_eq "the static embed passes a round alone" 0 $?
expect_eq "installed librbarrier.so links no libssl or libcrypto" "" \
    "$(readelf -d "$lib/librbarrier.so.$version" | grep NEEDED | grep -E 'lib(ssl|crypto)\.so')"
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
expect_match "embed links the installed librbarrier.so.$major" \
    "librbarrier\.so\.$major => $lib/librbarrier\.so\.$major" "$(ldd "$embed")"

name=$(fresh embed)
"$embed" "$RB_URL" "$name" 2 embed 3 > "$RB_TEST_TMP/embed.out" 2> "$RB_TEST_TMP/embed.err" &
epid=$!
cli_codes=""
for i in 1 2 3; do
    rb wait --name "$name" --n 2 --id cli --timeout 30; cli_codes="$cli_codes$?"
done
wait "$epid"; ecode=$?
expect_eq "3 rounds: embed and a CLI party both exit 0" "0:000" "$ecode:$cli_codes"
expect_eq "embed printed 3 rounds passed" 3 "$(grep -c "^embed: $name round [0-9]* passed (2 parties)$" "$RB_TEST_TMP/embed.out")"
expect_eq "embed: nothing on stderr" "" "$(cat "$RB_TEST_TMP/embed.err")"

# A round embed waits in alone, broken by reset: it exits 3 like the CLI.
"$embed" "$RB_URL" "$name" 2 embed > /dev/null 2> "$RB_TEST_TMP/embed.err" &
epid=$!
wait_arrived "$name" 1
rb reset --name "$name" > /dev/null
wait "$epid"
expect_eq "embed alone, round reset: exit 3" 3 $?
expect_match "embed says why" "broken.*reset" "$(cat "$RB_TEST_TMP/embed.err")"
unset LD_LIBRARY_PATH

mk uninstall DESTDIR="$dest" PREFIX=/usr > "$RB_TEST_TMP/uninstall.log" 2>&1
check "make uninstall succeeds" test $? -eq 0
expect_eq "make uninstall leaves no file" "" \
    "$(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\./||')"
rm -rf "$dest"
