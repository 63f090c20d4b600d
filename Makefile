# evident: build, deps, check, evidence, asan, lint, install.
#
# Flags are composed as:
#   EV_CFLAGS  = language + warnings (+ -Werror when WERROR=1 or CI is set)
#              + -ffp-contract=off (derived numbers must be bit-identical
#                everywhere) + OPT + dependency CPPFLAGS
#   EV_LDLIBS  = sqlite3, libcrypto, libzip, libcjson (+ check for tests)
# DEPS=.deps builds against packages unpacked into .deps/root (no apt-get).
# Quiet unless V=1.

V ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
PREFIX  ?= /usr/local
DESTDIR ?=
DEPS    ?=
VERSION := 0.1.0

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes
ifneq ($(filter 1 true,$(WERROR) $(CI)),)
WARN += -Werror
endif

DEP_CPPFLAGS :=
DEP_LDFLAGS  :=
ifneq ($(DEPS),)
DEPS_ROOT := $(abspath $(DEPS))/root
DEP_CPPFLAGS := -I$(DEPS_ROOT)/usr/include -I$(DEPS_ROOT)/usr/include/x86_64-linux-gnu
DEP_LDFLAGS  := -L$(DEPS_ROOT)/usr/lib/x86_64-linux-gnu -L$(DEPS_ROOT)/usr/lib \
                -Wl,-rpath,$(DEPS_ROOT)/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(DEPS_ROOT)/usr/lib
endif

EV_CPPFLAGS := -D_GNU_SOURCE -DEV_VERSION='"$(VERSION)"' -Isrc -Isrc/common -Ikernels $(DEP_CPPFLAGS)
EV_CFLAGS   := -std=c11 $(WARN) -ffp-contract=off -fno-fast-math $(OPT) $(EXTRA_CFLAGS)
EV_LDFLAGS  := $(DEP_LDFLAGS) $(EXTRA_LDFLAGS)
EV_LDLIBS   := -lsqlite3 -lzip -lcjson -lcrypto -lz -lm -lpthread
CHECK_LIBS  := -lcheck -lsubunit -lrt -lm -lpthread

# Library: every .c under src/ and the cpu kernels, minus program mains and
# the command layer (src/cli/, which prints and turns statuses into exits).
LIB_SRC  := $(filter-out %_main.c src/cli/%,$(wildcard src/*/*.c)) $(wildcard kernels/*.c)
CLI_SRC  := $(filter-out %_main.c,$(wildcard src/cli/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_SRC := $(wildcard src/*/*_main.c)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out tests/check_%.c,$(wildcard tests/*.c))
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/obj/%.o)

PROGRAMS := $(BUILD)/evident $(BUILD)/verify-bundle

.PHONY: all check test asan lint install clean deps vendor-debs evidence receipts
all: $(BUILD)/libevident.a $(PROGRAMS) $(EXTRA_PROGRAMS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(EV_CPPFLAGS) $(EV_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libevident.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/evident: $(BUILD)/obj/src/cli/evident_main.o $(CLI_OBJ) $(BUILD)/libevident.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

$(BUILD)/verify-bundle: $(BUILD)/obj/src/verify/verify_main.o $(BUILD)/libevident.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT_OBJ) $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) $(CHECK_LIBS) -o $@

check test: all $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; EV_BUILD=$(BUILD) $$t || fail=1; \
	done; \
	if [ $$fail -ne 0 ]; then echo "make check: FAILED"; exit 1; fi; \
	echo "make check: all suites passed"

clean:
	rm -rf $(BUILD)

# Each module may add rules in its own fragment (one writer per file):
# generated sources, extra programs, extra targets.
include $(wildcard src/*/module.mk)
-include kernels/build.mk
-include tests/fuzz/fuzz.mk

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(MAIN_SRC:%.c=$(BUILD)/obj/%.d) $(TEST_SRC:%.c=$(BUILD)/obj/%.d)
