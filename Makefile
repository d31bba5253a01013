# rbarrier. `make` builds build/rbarrier and build/librbarrier.a; `make test`
# runs the unit tests and the integration tests against a redis-server the
# harness starts; `make asan` does the same under ASan+UBSan; `make valgrind`
# under memcheck; `make bench` measures.

BUILD ?= build
CC ?= cc
OPT ?= -O2 -g
WARN = -std=c99 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
       -Wmissing-prototypes -Wwrite-strings -Wformat=2
HIREDIS_CFLAGS := $(shell pkg-config --cflags hiredis 2>/dev/null)
HIREDIS_LIBS := $(shell pkg-config --libs hiredis 2>/dev/null || echo -lhiredis)
ALL_CFLAGS = $(WARN) $(OPT) $(HIREDIS_CFLAGS) -Ilib -Ilib/include \
             -I$(BUILD)/gen -MMD -MP $(EXTRA_CFLAGS) $(CFLAGS)
LIBS = $(HIREDIS_LIBS) -largtable2 -lm
ifeq ($(V),1)
Q =
else
Q = @
endif

LUA := $(sort $(wildcard lua/*.lua))
LIB_SRC := $(sort $(wildcard lib/*.c))
CLI_SRC := $(sort $(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/rb_scripts.o
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
# The fault-injection build: same sources, one more define, own objects.
FLIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/fobj/%.o) $(BUILD)/fobj/gen/rb_scripts.o
FCLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/fobj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all test check unit integration asan valgrind bench demo clean lint-lua
all: $(BUILD)/rbarrier $(BUILD)/librbarrier.a

$(BUILD)/gen/rb_scripts.c: $(LUA) tools/embed-lua.sh
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

$(BUILD)/librbarrier.a: $(LIB_OBJ)
	$(Q)$(AR) rcs $@ $^
$(BUILD)/librbarrier-fault.a: $(FLIB_OBJ)
	$(Q)$(AR) rcs $@ $^
$(BUILD)/rbarrier: $(CLI_OBJ) $(BUILD)/librbarrier.a
	@echo "  LINK $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/librbarrier.a $(LIBS) $(LDFLAGS)
$(BUILD)/rbarrier-fault: $(FCLI_OBJ) $(BUILD)/librbarrier-fault.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(FCLI_OBJ) $(BUILD)/librbarrier-fault.a $(LIBS) $(LDFLAGS)

# Unit tests link the library plus the CLI's pure option parsing.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/librbarrier.a $(BUILD)/obj/cli/opts.o
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -Icli -o $@ $< \
	    $(BUILD)/obj/cli/opts.o $(BUILD)/librbarrier.a -lcmocka $(LIBS) $(LDFLAGS)

unit: $(UNIT_BIN)
	$(Q)fails=0; for t in $(UNIT_BIN); do $(TEST_WRAP) $$t || fails=$$((fails+1)); done; \
	    test $$fails -eq 0

integration: $(BUILD)/rbarrier $(BUILD)/rbarrier-fault
	$(Q)RBARRIER="$(TEST_WRAP) $(abspath $(BUILD)/rbarrier)" \
	    RBARRIER_FAULT_BIN="$(TEST_WRAP) $(abspath $(BUILD)/rbarrier-fault)" \
	    bash tests/run.sh $(TESTS)

test check: all
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory integration

asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" OPT="-O1 -g" test

valgrind:
	$(Q)$(MAKE) --no-print-directory BUILD=build/valgrind CC=gcc OPT="-O0 -g" \
	    TEST_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
	    TESTS="$(VALGRIND_TESTS)" test

VALGRIND_TESTS ?= tests/integration/t_basic.sh tests/integration/t_badinput.sh

demo: $(BUILD)/rbarrier
	$(BUILD)/rbarrier demo

$(BUILD)/bench/rb_bench: bench/rb_bench.c $(BUILD)/librbarrier.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -o $@ $< $(BUILD)/librbarrier.a $(LIBS) -lpthread $(LDFLAGS)

bench: all $(BUILD)/bench/rb_bench
	$(Q)RBARRIER=$(abspath $(BUILD)/rbarrier) RB_BENCH=$(abspath $(BUILD)/bench/rb_bench) \
	    BUILD=$(abspath $(BUILD)) bash bench/run.sh

lint-lua:
	$(Q)for f in $(LUA); do luac5.1 -p $$f || exit 1; done

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
