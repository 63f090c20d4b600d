# tests/fuzz/fuzz.mk: libFuzzer targets (clang, ASan + UBSan) for the
# hostile-input readers: the zip reader (fuzz_zipread), the strict JSON
# reader (fuzz_json) and the strict CSV reader (fuzz_csv); and a
# differential target (fuzz_samples): the verifier's samples.csv reading,
# whole, with continuation rows and streamed, must agree exactly; and the
# DSSE envelope reader of signed receipts (fuzz_dsse).
# Included by the top Makefile.
#
#   make fuzz-build                  build build/fuzz/fuzz_<target>
#   make fuzz-replay                 run each target once over its committed
#                                    corpus tests/fuzz/corpus/<target>/ (CI)
#   make fuzz [FUZZ_SECONDS=60]      fuzz each target in turn for that long
#                                    (with tests/fuzz/<target>.dict and the
#                                    libFuzzer flags in <target>.flags if any);
#                                    new inputs go to build/fuzz/work/<target>/,
#                                    crashes to tests/fuzz/findings/ (ignored)
#   make fuzz-merge                  add the work inputs that add coverage to
#                                    the committed corpus (-merge=1)
#
# The sources are compiled again here with -fsanitize=fuzzer-no-link (the
# library build is untouched); system libraries (libzip, zlib, cJSON) are not
# instrumented.  FUZZ_TARGETS=zipread limits any target to some of them.

FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= zipread json csv samples dsse
FUZZ_RSS_MB  ?= 2048
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -g -O1 -Wall -Wextra -ffp-contract=off $(FUZZ_SAN)

# Everything a target may need: common code and the zip reader (with its
# problem list).
FUZZ_LIB_SRC := $(filter-out %_main.c,$(wildcard src/common/*.c))
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
# fuzz_samples needs the verifier, and through it the whole library.
FUZZ_ALL_SRC := $(filter-out %_main.c,$(wildcard src/*/*.c kernels/*.c))
FUZZ_ALL_OBJ := $(FUZZ_ALL_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

.PHONY: fuzz-build fuzz-replay fuzz fuzz-merge
# keep the objects (make would delete them as intermediates of the pattern rules)
.SECONDARY: $(FUZZ_ALL_OBJ) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o)
fuzz-build: $(FUZZ_BINS)

.PHONY: fuzz-deps-check
fuzz-deps-check:
	$(Q)FUZZ_CC='$(FUZZ_CC)' sh mk/deps-check.sh fuzz

$(FUZZ_BUILD)/obj/%.o: %.c | deps-check fuzz-deps-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(EV_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_samples: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_samples.o $(FUZZ_ALL_OBJ) $(SCHEMA_SQL_O) $(BUILD_ID_O)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

$(FUZZ_BUILD)/fuzz_dsse: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_dsse.o $(FUZZ_LIB_OBJ) \
                         $(FUZZ_BUILD)/obj/src/sign/dsse.o $(FUZZ_BUILD)/obj/src/sign/key.o
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

# One pass over each committed corpus: every input must run clean.
fuzz-replay: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
	  log=$(FUZZ_BUILD)/replay-$$t.log; \
	  echo "== fuzz-replay $$t ($$(ls tests/fuzz/corpus/$$t | wc -l) inputs)"; \
	  if ! $(FUZZ_BUILD)/fuzz_$$t -runs=0 -rss_limit_mb=$(FUZZ_RSS_MB) \
	      tests/fuzz/corpus/$$t >$$log 2>&1; then cat $$log; exit 1; fi; \
	  tail -n 1 $$log; \
	done; echo "fuzz-replay: every corpus input ran clean"

# Fuzz each target in turn (one at a time: the machine is shared).
fuzz: $(FUZZ_BINS)
	$(Q)mkdir -p tests/fuzz/findings
	$(Q)for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/work/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=$(FUZZ_RSS_MB) \
	    -timeout=10 -print_final_stats=1 -artifact_prefix=tests/fuzz/findings/$$t- \
	    $$(test -f tests/fuzz/$$t.dict && echo -dict=tests/fuzz/$$t.dict) \
	    $$(test -f tests/fuzz/$$t.flags && cat tests/fuzz/$$t.flags) \
	    $(FUZZ_BUILD)/work/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

# Keep what adds coverage: merge the work inputs into the committed corpus.
fuzz-merge: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
	  log=$(FUZZ_BUILD)/merge-$$t.log; \
	  mkdir -p $(FUZZ_BUILD)/work/$$t; \
	  if ! $(FUZZ_BUILD)/fuzz_$$t -merge=1 -rss_limit_mb=$(FUZZ_RSS_MB) \
	      tests/fuzz/corpus/$$t $(FUZZ_BUILD)/work/$$t >$$log 2>&1; then cat $$log; exit 1; fi; \
	  echo "$$t: $$(tail -n 1 $$log)"; \
	done

-include $(FUZZ_ALL_OBJ:.o=.d) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.d)
