# evident: build, deps, check, evidence, asan, lint, install, uninstall.
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
DEPS_STAMP   :=
ifneq ($(DEPS),)
DEPS_ROOT := $(abspath $(DEPS))/root
DEPS_STAMP := $(DEPS_ROOT)/.unpacked
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
LIB_SRC  := $(filter-out %_main.c src/cli/%,$(wildcard src/*/*.c)) $(filter-out kernels/ops_lib_cpu.c,$(wildcard kernels/*.c))
CLI_SRC  := $(filter-out %_main.c,$(wildcard src/cli/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_SRC := $(wildcard src/*/*_main.c)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out tests/check_%.c,$(wildcard tests/*.c))
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/obj/%.o)

PROGRAMS := $(BUILD)/evident $(BUILD)/verify-bundle

.PHONY: all check test check-run asan lint install uninstall clean deps vendor-debs tests \
        deps-check deps-check-tests
all: $(DEPS_STAMP) $(BUILD)/libevident.a $(PROGRAMS) $(EXTRA_PROGRAMS)
tests: $(TEST_BIN)

# Every target checks what it needs before it compiles anything
# (mk/deps-check.sh): each object waits for deps-check (the library's
# headers) and each test object for deps-check-tests (check, python3); a
# missing one is named with its package and how to install it.  Both are
# order-only: they never make a target out of date.
deps-check: | $(DEPS_STAMP)
	$(Q)CC='$(CC)' CPPFLAGS='$(EV_CPPFLAGS)' DEPS='$(DEPS)' BUILD='$(BUILD)' sh mk/deps-check.sh build
deps-check-tests: | deps-check
	$(Q)CC='$(CC)' CPPFLAGS='$(EV_CPPFLAGS)' DEPS='$(DEPS)' BUILD='$(BUILD)' sh mk/deps-check.sh tests

# Test objects are not intermediates: make would delete them after every
# link (and print the rm last), so every make check compiled them again.
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
.SECONDARY: $(TEST_OBJ) $(TEST_SUPPORT_OBJ)
$(TEST_OBJ) $(TEST_SUPPORT_OBJ): | deps-check-tests

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP) deps-check
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

# verify-bundle stands on the recipe, not on the exporter or the store: it
# links only what it reads a bundle with (src/common, src/evidence: the
# shared layer, src/verify, the model and the selector's decision, the
# outcome rules, the protocol, plan, sample and fault-arm rules and
# external-kernel rules, the launch plans and the oracle), without
# src/bundle/ (the exporter), without the store (src/store/store*.c) or
# the model's store adapter (src/runner/model_store.c), the snapshot's git
# call or the cpu thread pool, and without SQLite.  A symbol it reaches outside that list fails this link:
# the independence is proved by every build.
VERIFY_LIB_SRC := $(wildcard src/common/*.c src/evidence/*.c) \
                  $(filter-out %_main.c,$(wildcard src/verify/*.c)) \
                  src/model/model.c src/model/model_csv.c src/model/model_json.c src/model/model_obs.c \
                  src/model/select.c \
                  src/store/outcome.c src/runner/protocol.c src/runner/plan.c src/runner/sample_rules.c \
                  src/runner/fault_rules.c \
                  src/runner/ext_kernel.c src/runner/ext_compile.c src/runner/proc.c src/runner/validate.c kernels/binding.c kernels/dtype.c kernels/inputs.c kernels/oracle.c kernels/plants.c \
                  kernels/selector.c kernels/lanes.c
VERIFY_LIB_OBJ := $(VERIFY_LIB_SRC:%.c=$(BUILD)/obj/%.o)
VERIFY_LDLIBS  := -lzip -lcjson -lcrypto -lz -lm

$(BUILD)/libevident_verify.a: $(VERIFY_LIB_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/verify-bundle: $(BUILD)/obj/src/verify/verify_main.o $(BUILD)/libevident_verify.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(VERIFY_LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT_OBJ) $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) $(CHECK_LIBS) -o $@

# `make check` first checks that the build directory and the tests'
# temporary directory ($TMPDIR, else /tmp) can be written and have room
# (mk/deps-check.sh room: each one short is named, exit 2, nothing
# written), then makes sure the dependencies are there (installing them on
# a fresh Debian machine when run as root), then builds and runs every
# suite.  check-run does only the last.
check test:
	$(Q)BUILD='$(BUILD)' sh mk/deps-check.sh room
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory check-run

# Each suite prints a progress line at least every 10 s (tests/progress.c)
# and its time; the verdict, naming the failed suites, is the last line.
# With DEPS=DIR the tests find the vendored programs (DIR/bin, after the
# host's own) and know the build is one (EV_DEPS: check_sign).  A test's
# timeout guards against a hang, never against a slow host: each suite's
# test cases set theirs for a host at load 8 (4x slower than idle), and a
# case that sets none gets 60 s, not check's 4 (CK_DEFAULT_TIMEOUT).
CHECK_ENV := EV_BUILD=$(BUILD) CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60}
ifneq ($(DEPS),)
CHECK_ENV += EV_DEPS='$(DEPS)' PATH="$$PATH:$(abspath $(DEPS))/bin"
endif
# SUITES="check_runner check_verify" runs only those suites (a GPU host
# whose commands are limited to 10 minutes runs them in parts:
# tools/gpu/host-check.sh); a name that is not a suite is refused.
SUITES ?=
CHECK_BIN := $(if $(strip $(SUITES)),$(addprefix $(BUILD)/tests/,$(SUITES)),$(TEST_BIN))
check-run: all $(TEST_BIN)
	@for t in $(CHECK_BIN); do case " $(TEST_BIN) " in *" $$t "*) ;; \
	  *) echo "make check: SUITES names $${t##*/}, which is not a suite (tests/check_*.c)"; exit 2;; esac; done
	@failed=""; t0=$$(date +%s); for t in $(CHECK_BIN); do \
	  echo "== $$t"; s=$$(date +%s); \
	  $(CHECK_ENV) $$t || failed="$$failed $${t##*/}"; \
	  echo "   $${t##*/}: $$(( $$(date +%s) - s )) s"; \
	done; \
	if [ -n "$$failed" ]; then echo "make check: FAILED:$$failed ($$(( $$(date +%s) - t0 )) s)"; exit 1; fi; \
	echo "make check: all $(words $(CHECK_BIN)) suites passed ($$(( $$(date +%s) - t0 )) s)"

# ---- dependencies -------------------------------------------------------
# Build-time packages (Debian names).  `make deps` installs the missing ones
# with apt-get when run as root (one apt-get update first) and otherwise
# prints the exact command.  With DEPS=DIR nothing calls apt-get: the .deb
# files that `make vendor-debs` fetched into DIR/debs are unpacked into
# DIR/root (never into /) and the build compiles and links against them,
# with an rpath so the programs find the libraries at run time.
# Every program a test or a target runs is one of them, or of Debian's
# essential set (mk/deps-check.sh tests checks them by name): openssl and
# python3-cryptography (check_sign's cross-checks), python3-numpy (a Python
# arm on cpu: check_runner's numpy arms), git (the stamp tests), python3.
# The vendored set adds the openssl program (DIR/bin/openssl, a wrapper
# that finds its vendored libraries).
APT_PKGS  := libsqlite3-dev libssl-dev libzip-dev libcjson-dev check pkg-config zlib1g-dev python3 \
             openssl python3-cryptography python3-numpy git
VENDOR_DEBS := libsqlite3-dev libsqlite3-0 libssl-dev libssl3 libzip-dev libzip4 \
               libcjson-dev libcjson1 check libsubunit-dev libsubunit0 \
               zlib1g-dev zlib1g libbz2-1.0 openssl

ifeq ($(DEPS),)
deps:
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all build dependencies present"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
	    || { echo "deps: apt-get install failed; run it by hand: apt-get install -y$$missing"; exit 1; }; \
	else \
	  echo "deps: missing$$missing; run: sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; \
	fi
else
deps: $(DEPS_STAMP)
$(DEPS_STAMP): $(wildcard $(DEPS)/debs/*.deb)
	@if ! ls $(DEPS)/debs/*.deb >/dev/null 2>&1; then \
	  echo "deps: no packages in $(DEPS)/debs: run 'make vendor-debs' on a connected machine first"; exit 1; fi
	@mkdir -p $(DEPS_ROOT) $(abspath $(DEPS))/bin
	@for f in $(DEPS)/debs/*.deb; do dpkg-deb -x $$f $(DEPS_ROOT) || exit 1; done
	@if [ -x $(DEPS_ROOT)/usr/bin/openssl ]; then \
	  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/usr/lib/x86_64-linux-gnu$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} exec %s/usr/bin/openssl "$$@"\n' \
	    '$(DEPS_ROOT)' '$(DEPS_ROOT)' > $(abspath $(DEPS))/bin/openssl && chmod +x $(abspath $(DEPS))/bin/openssl; \
	fi
	@touch $@
	@echo "deps: unpacked $(words $(wildcard $(DEPS)/debs/*.deb)) packages into $(DEPS_ROOT)"
endif

vendor-debs:
	@mkdir -p .deps/debs
	cd .deps/debs && apt-get download $(VENDOR_DEBS)
	@echo "vendor-debs: packages in .deps/debs; build elsewhere with 'make DEPS=.deps ...'"

# ---- sanitizers, lint, install -------------------------------------------
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# Sanitized code runs 2-5x slower, so every suite's timeouts are tripled
# (check's CK_TIMEOUT_MULTIPLIER; the verify suite's streamed pass of its
# first test took just over its 60 s there).
asan: deps
	$(Q)CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-3} $(MAKE) --no-print-directory BUILD=build-asan \
	    OPT='-O1 -g $(ASAN_FLAGS)' EXTRA_LDFLAGS='$(ASAN_FLAGS)' check-run

LINT_SRC = $(wildcard src/*/*.c src/*/*.h kernels/*.c kernels/*.h tests/*.c)
BANNED := sprintf|strcpy|strcat|atoi|atof|strtok|gets
lint:
	$(Q)sh mk/deps-check.sh lint
	@bad=$$(grep -nE '(^|[^_[:alnum:]])($(BANNED))[[:space:]]*\(' $(LINT_SRC) kernels/*.cu 2>/dev/null | grep -v snprintf); \
	if [ -n "$$bad" ]; then echo "lint: banned functions (docs/HACKING.md, \"How the code reads\"):"; echo "$$bad"; exit 1; fi
	@clang-format --dry-run -Werror $(LINT_SRC) || { echo "lint: run 'clang-format -i' on the files above"; exit 1; }
	@python3 ci/vocab-once.py
	@python3 ci/doc-paths.py
	@python3 ci/fn-size.py
	@echo "lint: ok ($(words $(LINT_SRC)) files)"

# make install [PREFIX=/usr/local] [DESTDIR=]: everything `evident run`
# needs (mk/install.sh lists it: programs, the worker and the torch peer
# script under libexec/evident, the measurement closure and the protocols
# under share/evident, the library, its headers, evident.pc), each file
# recorded in share/evident/install-manifest; make uninstall removes
# exactly those.
install: all
	$(Q)BUILD='$(BUILD)' PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' VERSION='$(VERSION)' sh mk/install.sh install
uninstall:
	$(Q)BUILD='$(BUILD)' PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' VERSION='$(VERSION)' sh mk/install.sh uninstall

# A store holds measurements that may have taken a GPU host many minutes:
# clean removes everything else under $(BUILD) and says how to remove a
# store by hand.
clean:
	@if [ -d $(BUILD) ]; then \
	  find $(BUILD) -mindepth 1 -maxdepth 1 ! -name evidence ! -name 'evidence.kept-*' -exec rm -rf {} +; \
	fi
	@for d in $(BUILD)/evidence $(BUILD)/evidence.kept-*; do \
	  [ -e "$$d" ] && echo "make clean: kept $$d (a store of measurements): delete it by hand, rm -r $$d, when it is no longer needed"; \
	done; true

# Each module may add rules in its own fragment (one writer per file):
# generated sources, extra programs, extra targets.
include $(wildcard src/*/module.mk)
-include kernels/build.mk
# the kernels' objects (kernels/build.mk, when nvcc is found) wait for the
# dependency check too
ifneq ($(CUDA_LIB_OBJ),)
$(CUDA_LIB_OBJ) $(BUILD)/cuda/kernel_bench_main.o: | deps-check
endif
-include tests/fuzz/fuzz.mk

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(MAIN_SRC:%.c=$(BUILD)/obj/%.d) $(TEST_SRC:%.c=$(BUILD)/obj/%.d)
