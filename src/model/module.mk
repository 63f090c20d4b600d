# src/model/module.mk: the model's own programs and targets.
#
#   make bench-fit          times `evident fit` on the seed table and on
#                           generated tables (200 and 417 geometries)
#   make model-determinism  fits the seed table and a generated table with
#                           builds at -O0, -O2 and under ASan+UBSan and
#                           compares the model.json bytes (cmp)

$(BUILD)/bench-fit: $(BUILD)/obj/src/model/bench_fit_main.o $(BUILD)/libevident.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

.PHONY: bench-fit model-determinism
bench-fit: $(BUILD)/bench-fit $(BUILD)/evident
	$(Q)$(BUILD)/bench-fit $(BUILD)/evident tests/fixtures/seed16.csv

MODEL_DET_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
model-determinism: $(BUILD)/bench-fit
	$(Q)$(MAKE) --no-print-directory BUILD=build-O0 OPT='-O0 -g' build-O0/evident
	$(Q)$(MAKE) --no-print-directory BUILD=build-O2 OPT='-O2 -g' build-O2/evident
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan OPT='-O1 -g $(MODEL_DET_FLAGS)' \
	    EXTRA_LDFLAGS='$(MODEL_DET_FLAGS)' build-asan/evident
	$(Q)set -e; d=$$(mktemp -d); \
	$(BUILD)/bench-fit --generate 60 $$d/gen.csv; \
	for t in tests/fixtures/seed16.csv:24 $$d/gen.csv:132; do \
	  csv=$${t%:*}; sms=$${t##*:}; \
	  for b in build-O0 build-O2 build-asan; do \
	    $$b/evident fit --observations $$csv --sms $$sms --out $$d/$$b.json >/dev/null; \
	  done; \
	  cmp $$d/build-O0.json $$d/build-O2.json; cmp $$d/build-O0.json $$d/build-asan.json; \
	  echo "model-determinism: $$csv: -O0, -O2 and asan give identical model.json ($$(sha256sum < $$d/build-O2.json | cut -c1-16))"; \
	done; rm -rf $$d
