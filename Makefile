# rbarrier. `make` builds build/rbarrier, build/librbarrier.a and the shared
# build/librbarrier.so.*; `make test` runs the unit tests and the integration
# tests against a redis-server the harness starts; `make asan` does the same
# under ASan+UBSan; `make valgrind` under memcheck; `make bench` measures;
# `make install` / `make uninstall` honour PREFIX and DESTDIR.

BUILD ?= build
CC ?= cc
OPT ?= -O2 -g
WARN = -std=c99 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
       -Wmissing-prototypes -Wwrite-strings -Wformat=2
HIREDIS_CFLAGS := $(shell pkg-config --cflags hiredis 2>/dev/null)
HIREDIS_LIBS := $(shell pkg-config --libs hiredis 2>/dev/null || echo -lhiredis)
ALL_CFLAGS = $(WARN) $(OPT) $(HIREDIS_CFLAGS) $(SSL_CFLAGS) -Ilib -Ilib/include \
             -I$(BUILD)/gen -MMD -MP $(EXTRA_DEFS) $(EXTRA_CFLAGS) $(CFLAGS)
# OpenSSL for rediss:// (hiredis 0.14 has no TLS): its headers at build
# time; libssl itself is loaded with dlopen by the first rediss:// handle
# (lib/rb_openssl.h), so nothing links it and a plain URL's process does
# not pay for loading it. Only the unit tests' TLS server links it.
SSL_CFLAGS := $(shell pkg-config --cflags openssl 2>/dev/null)
SSL_LIBS := $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto)
# What the library itself needs (the shared library and rbarrier.pc carry
# it); the CLI adds argtable. -ldl and -lpthread (dlopen, pthread_once)
# are part of libc since glibc 2.34 and add nothing there.
LIB_LIBS = $(HIREDIS_LIBS) -ldl -lpthread -lm
PC_REQUIRES = hiredis
PC_LIBS = -ldl -lpthread -lm
LIBS = $(LIB_LIBS) -largtable2
ifeq ($(V),1)
Q =
else
Q = @
endif

LUA := $(sort $(wildcard lua/*.lua))
LUA_INCLUDES := $(sort $(wildcard lua/includes/*.lua))
LIB_SRC := $(sort $(wildcard lib/*.c))
CLI_SRC := $(sort $(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/rb_scripts.o
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
# The fault-injection build: same sources, one more define, own objects.
FLIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/fobj/%.o) $(BUILD)/fobj/gen/rb_scripts.o
FCLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/fobj/%.o)
# cli/ includes only the public header and its own: the POSIX level it
# needs under -std=c99 comes from here, not from a lib/ header.
CLI_DEFS = -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
$(CLI_OBJ) $(FCLI_OBJ) $(CLI_SRC:%.c=$(BUILD)/pic/%.o): EXTRA_DEFS = $(CLI_DEFS)
# The shared library: the same sources built position-independent in their
# own objects (the static library and the CLI stay as they are). It exports
# only what the public header declares (a version script made from it), and
# is named after RB_VERSION: soname librbarrier.so.MAJOR.
PIC_OBJ := $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/rb_scripts.o
VERSION := $(shell sed -n 's/^.define RB_VERSION "\(.*\)".*/\1/p' lib/include/rbarrier.h)
SONAME := librbarrier.so.$(firstword $(subst ., ,$(VERSION)))
SOLIB := librbarrier.so.$(VERSION)
# A missing library dependency fails the link, not a user's program later;
# sanitizer runtimes are resolved by the executable, so not with them.
NO_UNDEFINED = $(if $(findstring sanitize,$(EXTRA_CFLAGS) $(LDFLAGS)),,-Wl,--no-undefined)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all test check unit integration test-cluster asan valgrind bench demo clean lint-lua \
        fuzz fuzz-build fuzz-run \
        install uninstall test-compose
all: $(BUILD)/rbarrier $(BUILD)/librbarrier.a $(BUILD)/$(SOLIB) $(BUILD)/rbarrier.pc

$(BUILD)/gen/rb_scripts.c: $(LUA) $(LUA_INCLUDES) tools/embed-lua.sh
	@mkdir -p $(dir $@)
	$(Q)sh tools/embed-lua.sh $@ $(LUA)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/fobj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -DRB_FAULT_INJECTION -c -o $@ $<
$(BUILD)/fobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -DRB_FAULT_INJECTION -c -o $@ $<

$(BUILD)/pic/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/librbarrier.map: lib/include/rbarrier.h $(wildcard lib/include/rbarrier/*.h) tools/public-symbols.sh
	@mkdir -p $(dir $@)
	$(Q){ echo '{ global:'; sh tools/public-symbols.sh "$(CC)" $< | sed 's/.*/    &;/'; \
	      echo '  local: *; };'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/$(SOLIB): $(PIC_OBJ) $(BUILD)/librbarrier.map
	@echo "  LINK $@"
	$(Q)$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,$(SONAME) \
	    -Wl,--version-script=$(BUILD)/librbarrier.map $(NO_UNDEFINED) \
	    -o $@ $(PIC_OBJ) $(LIB_LIBS) $(LDFLAGS)
	$(Q)ln -sf $(SOLIB) $(BUILD)/$(SONAME) && ln -sf $(SONAME) $(BUILD)/librbarrier.so

$(BUILD)/librbarrier.a: $(LIB_OBJ)
	$(Q)$(AR) rcs $@ $^
$(BUILD)/librbarrier-fault.a: $(FLIB_OBJ)
	$(Q)$(AR) rcs $@ $^
$(BUILD)/rbarrier: $(CLI_OBJ) $(BUILD)/librbarrier.a
	@echo "  LINK $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/librbarrier.a $(LIBS) $(LDFLAGS)
$(BUILD)/rbarrier-fault: $(FCLI_OBJ) $(BUILD)/librbarrier-fault.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(FCLI_OBJ) $(BUILD)/librbarrier-fault.a $(LIBS) $(LDFLAGS)

# Unit tests link the library plus the CLI's parts that need no
# connection (option values, the JSON writer, the demo line, the reduction,
# the process runner, the history view).
CLI_PURE_OBJ := $(BUILD)/obj/cli/opts.o $(BUILD)/obj/cli/json.o \
                $(BUILD)/obj/cli/demo_line.o $(BUILD)/obj/cli/reduce.o \
                $(BUILD)/obj/cli/spawn.o $(BUILD)/obj/cli/birth.o \
                $(BUILD)/obj/cli/signals.o \
                $(BUILD)/obj/cli/history.o $(BUILD)/obj/cli/history_jobs.o
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/librbarrier.a $(CLI_PURE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -Icli -o $@ $< \
	    $(CLI_PURE_OBJ) $(BUILD)/librbarrier.a -lcmocka $(LIBS) $(SSL_LIBS) $(LDFLAGS)

unit: $(UNIT_BIN)
	$(Q)fails=0; for t in $(UNIT_BIN); do $(TEST_WRAP) $$t || fails=$$((fails+1)); done; \
	    test $$fails -eq 0

integration: $(BUILD)/rbarrier $(BUILD)/rbarrier-fault
	$(Q)RBARRIER="$(TEST_WRAP) $(abspath $(BUILD)/rbarrier)" RB_BUILD="$(abspath $(BUILD))" \
	    RB_CC="$(CC)" RB_CFLAGS="$(EXTRA_CFLAGS)" RB_LDFLAGS="$(LDFLAGS)" \
	    RBARRIER_FAULT_BIN="$(TEST_WRAP) $(abspath $(BUILD)/rbarrier-fault)" \
	    bash tests/run.sh $(TESTS)

# Redis Cluster and Sentinel on loopback (tests/cluster): servers started
# and stopped by the tests; under 5 minutes.
test-cluster: $(BUILD)/rbarrier $(BUILD)/rbarrier-fault
	$(Q)$(MAKE) --no-print-directory integration TESTS="$(sort $(wildcard tests/cluster/t_*.sh))"

test check: all
	$(Q)$(MAKE) --no-print-directory lint-lua
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory integration

# make fuzz (not part of make test): libFuzzer targets built by clang with
# ASan+UBSan for the URL parser, the name/id/number checks and key layout,
# the option value parsers of cli/opts.c and every barrier reply decoder.
# Each runs FUZZ_SECONDS (default 150) from the seeds in tests/fuzz/seeds.
FUZZ_TARGETS := url checks opts reply
FUZZ_SECONDS ?= 150
fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT="-O1 -g" \
	    EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" fuzz-run

fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/librbarrier.a $(CLI_PURE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -Icli -o $@ $< \
	    $(CLI_PURE_OBJ) $(BUILD)/librbarrier.a $(LIBS) $(LDFLAGS)

# A target fails the run when libFuzzer exits non-zero (a crash, a leak,
# an out-of-memory or a timeout: each also leaves its input) or leaves such
# an input in build/fuzz/fuzz/artifacts-TARGET; every target runs anyway.
fuzz-run: fuzz-build
	$(Q)fails=0; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(BUILD)/fuzz/corpus-$$t $(BUILD)/fuzz/artifacts-$$t; \
	    echo "== fuzz_$$t ($(FUZZ_SECONDS) s)"; \
	    (cd $(BUILD)/fuzz && ./fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	        -print_final_stats=1 -artifact_prefix=artifacts-$$t/ \
	        corpus-$$t $(abspath tests/fuzz/seeds/$$t) > fuzz_$$t.log 2>&1); \
	    rc=$$?; \
	    grep -E '^(stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Done)' \
	        $(BUILD)/fuzz/fuzz_$$t.log; \
	    found=$$(ls $(BUILD)/fuzz/artifacts-$$t | grep -E '^(crash|leak|oom|timeout)-'); \
	    if [ $$rc -ne 0 ] || [ -n "$$found" ]; then \
	        echo "fuzz_$$t FAILED (exit $$rc): $$found; see $(BUILD)/fuzz/fuzz_$$t.log"; \
	        fails=$$((fails + 1)); \
	    fi; \
	done; \
	test $$fails -eq 0

asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" OPT="-O1 -g" test

valgrind:
	$(Q)$(MAKE) --no-print-directory BUILD=build/valgrind CC=gcc OPT="-O0 -g" \
	    TEST_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
	    TESTS="$(VALGRIND_TESTS)" test

VALGRIND_TESTS ?= tests/integration/t_basic.sh tests/integration/t_badinput.sh

# Real torch.distributed programs under `rbarrier run` (tests/torch): first
# installs Debian's python3-torch (tools/install-torch.sh), which the quick
# start's tools/install-deps.sh leaves out (about 830 MB).
.PHONY: test-torch
test-torch: $(BUILD)/rbarrier $(BUILD)/rbarrier-fault
	$(Q)sh tools/install-torch.sh
	$(Q)$(MAKE) --no-print-directory integration TESTS="$(sort $(wildcard tests/torch/t_*.sh))"

# The docker-compose cluster started for real with podman (as root; installs
# podman and makes a debian:bookworm-slim base image when there is none).
# The host's binary checks the workers' lines (`rbarrier demo --check`).
test-compose: $(BUILD)/rbarrier
	$(Q)RBARRIER=$(abspath $(BUILD)/rbarrier) bash tests/compose/run.sh

demo: $(BUILD)/rbarrier
	$(BUILD)/rbarrier demo

# One object per measurement plus the shared pieces (bench/bench.h).
BENCH_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard bench/*.c)))
$(BUILD)/bench/rb_bench: $(BENCH_OBJ) $(BUILD)/librbarrier.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(BENCH_OBJ) $(BUILD)/librbarrier.a $(LIBS) -lpthread $(LDFLAGS)

bench: all $(BUILD)/bench/rb_bench
	$(Q)RBARRIER=$(abspath $(BUILD)/rbarrier) RB_BENCH=$(abspath $(BUILD)/bench/rb_bench) \
	    BUILD=$(abspath $(BUILD)) bash bench/run.sh

# Only the process-start rows (start, shell loops, a TLS process), the same
# way, in a minute or two; RB_BENCH_BASELINE=OLD-BINARY compares another
# build interleaved with this one.
.PHONY: bench-start
bench-start: all $(BUILD)/bench/rb_bench
	$(Q)RBARRIER=$(abspath $(BUILD)/rbarrier) RB_BENCH=$(abspath $(BUILD)/bench/rb_bench) \
	    bash bench/start.sh

# The lock's rows alone (pairs and hand-offs against redis-py's Lock, the
# commands per hand-off and per blocked waiter): a minute or two.
.PHONY: bench-lock bench-jobs bench-scale
bench-lock bench-jobs bench-scale: all $(BUILD)/bench/rb_bench
	$(Q)RB_BENCH_ONLY=$(@:bench-%=%) RBARRIER=$(abspath $(BUILD)/rbarrier) \
	    RB_BENCH=$(abspath $(BUILD)/bench/rb_bench) BUILD=$(abspath $(BUILD)) \
	    bash bench/run.sh

# A 4-member torch.distributed job under `rbarrier run` and under torchrun
# (c10d) in the same run: start, and a failure to the last exit
# (bench/torch.sh; installs Debian's python3-torch first).
.PHONY: bench-torch
bench-torch: $(BUILD)/rbarrier
	$(Q)sh tools/install-torch.sh
	$(Q)RBARRIER=$(abspath $(BUILD)/rbarrier) bash bench/torch.sh

# Every measurement once, for seconds: it fails when one cannot be made or
# prints no number, so the bench cannot rot unnoticed (its numbers mean
# nothing).
.PHONY: bench-smoke
bench-smoke: all $(BUILD)/bench/rb_bench
	$(Q)RB_BENCH_SMOKE=1 RBARRIER=$(abspath $(BUILD)/rbarrier) \
	    RB_BENCH=$(abspath $(BUILD)/bench/rb_bench) BUILD=$(abspath $(BUILD)) \
	    bash bench/run.sh

# The scripts as Redis gets them: Lua 5.1 syntax, no global assigned, no
# unknown global read (tools/lint-lua.sh; luac5.1 is Debian's lua5.1).
lint-lua:
	$(Q)sh tools/lint-lua.sh $(LUA)

# The protocol models (tests/model, doc/PROTOCOL.md): spin -a, cc, pan on
# every configuration, each search exhaustive (no bit-state hashing; the
# bounds are the parties, crashes, lost replies, signals and rounds each
# configuration allows); 1 to 3 minutes on 2 busy cores, most of it
# compiling pan.c. Not part of `make test`. `make model-mutants` seeds
# known protocol bugs and fails if spin misses one (about a minute).
.PHONY: model model-mutants
model:
	$(Q)sh tests/model/run.sh $(BUILD)/model
model-mutants:
	$(Q)sh tests/model/run.sh --mutants $(BUILD)/model

# Only the build directory in use (make clean BUILD=build/asan; the default
# build/ holds the asan and valgrind builds too).
clean:
	@case "$(BUILD)" in ""|/|.|..) echo "make clean: refusing BUILD='$(BUILD)'" >&2; exit 2;; esac
	rm -rf -- "$(BUILD)"

# ---- install ----------------------------------------------------------------
# The usual GNU names; each can be overridden. Nothing is built as root that
# `make` has not built already when run first as a user.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL ?= install

# The pkg-config file is made at build time for the PREFIX given then, so a
# different PREFIX at install time rewrites it.
$(BUILD)/rbarrier.pc: lib/rbarrier.pc.in lib/include/rbarrier.h FORCE
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES)|' -e 's|@LIBS_PRIVATE@|$(PC_LIBS)|' \
	    $< > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:

INSTALLED = $(BINDIR)/rbarrier $(LIBDIR)/librbarrier.a $(LIBDIR)/$(SOLIB) \
    $(LIBDIR)/$(SONAME) $(LIBDIR)/librbarrier.so $(INCLUDEDIR)/rbarrier.h \
    $(INCLUDEDIR)/rbarrier/barrier.h $(INCLUDEDIR)/rbarrier/lock.h \
    $(INCLUDEDIR)/rbarrier/job.h \
    $(PKGCONFIGDIR)/rbarrier.pc $(MANDIR)/man1/rbarrier.1 $(BASHCOMPDIR)/rbarrier

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/rbarrier \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 755 $(BUILD)/rbarrier $(DESTDIR)$(BINDIR)/rbarrier
	$(INSTALL) -m 644 $(BUILD)/librbarrier.a $(DESTDIR)$(LIBDIR)/librbarrier.a
	$(INSTALL) -m 755 $(BUILD)/$(SOLIB) $(DESTDIR)$(LIBDIR)/$(SOLIB)
	ln -sf $(SOLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/librbarrier.so
	$(INSTALL) -m 644 lib/include/rbarrier.h $(DESTDIR)$(INCLUDEDIR)/rbarrier.h
	$(INSTALL) -m 644 lib/include/rbarrier/barrier.h lib/include/rbarrier/lock.h \
	    lib/include/rbarrier/job.h $(DESTDIR)$(INCLUDEDIR)/rbarrier/
	$(INSTALL) -m 644 $(BUILD)/rbarrier.pc $(DESTDIR)$(PKGCONFIGDIR)/rbarrier.pc
	$(INSTALL) -m 644 doc/rbarrier.1 $(DESTDIR)$(MANDIR)/man1/rbarrier.1
	$(INSTALL) -m 644 completion/rbarrier.bash $(DESTDIR)$(BASHCOMPDIR)/rbarrier
	@# A real install into a library directory needs the loader cache
	@# refreshed; a staged one (DESTDIR) leaves that to its package.
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; then \
	    ldconfig; fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/rbarrier 2>/dev/null

# (build/bench/ may hold the dependencies of the one-file bench of old.)
-include $(shell find $(BUILD) -type f -name '*.d' ! -path '$(BUILD)/bench/*' 2>/dev/null)
