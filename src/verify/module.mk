# verify module fragment: the synthetic-store fixture (src/verify/fixture/,
# not part of libevident) for tests/check_verify and the speed benchmark.
#
#   make bench-verify [BENCH_SAMPLES=1000000]
#     builds a bundle of at least BENCH_SAMPLES samples through the store API
#     and the real exporter, then prints verify-bundle's time over the time of
#     `unzip -t` plus `sha256sum` of the same members, measured in the same run.

VFIX_OBJ := $(BUILD)/obj/src/verify/fixture/vfixture.o
BENCH_SAMPLES ?= 1000000

# The fixture before the library, so that what it calls there is linked.
$(BUILD)/tests/check_verify: $(BUILD)/obj/tests/check_verify.o $(TEST_SUPPORT_OBJ) $(VFIX_OBJ) $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) $(CHECK_LIBS) -o $@
-include $(VFIX_OBJ:.o=.d) $(BUILD)/obj/src/verify/fixture/bench_main.d

$(BUILD)/bench-verify: $(BUILD)/obj/src/verify/fixture/bench_main.o $(VFIX_OBJ) $(BUILD)/libevident.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

.PHONY: bench-verify
bench-verify: $(BUILD)/bench-verify $(BUILD)/verify-bundle
	$(Q)sh src/verify/fixture/bench.sh $(BUILD) $(BENCH_SAMPLES)
