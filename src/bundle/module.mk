# src/bundle/module.mk: the bundle module's own targets.
#
#   make receipts   re-exports every committed receipts/<host>/evidence.db
#                   (or evidence.db.xz, its store compressed: mk/receipt-store.sh)
#                   with the current code (no GPU): receipts/<host>/delivery.zip
#                   and receipts/<host>/ROOT (the root digest, one line) are
#                   rewritten.  The ROOT is written only when the export
#                   succeeded (through a temporary file), so a failed export
#                   leaves the old files in place and make stops.

.PHONY: receipts
RECEIPT_DBS := $(sort $(dir $(wildcard receipts/*/evidence.db receipts/*/evidence.db.xz)))

receipts: $(BUILD)/evident
	$(Q)set -e; for d in $(RECEIPT_DBS); do \
	  dir=$${d%/}; \
	  db=$$(sh mk/receipt-store.sh $$dir $(BUILD)/receipt-store.db); \
	  $(BUILD)/evident export --db $$db --out $$dir/delivery.zip > $$dir/ROOT.tmp || { rm -f $$dir/ROOT.tmp; exit 1; }; \
	  mv $$dir/ROOT.tmp $$dir/ROOT; \
	  rm -f $(BUILD)/receipt-store.db*; \
	  echo "  RECEIPT $$dir: $$(cat $$dir/ROOT)"; \
	done; \
	if [ -z "$(RECEIPT_DBS)" ]; then echo "  RECEIPT no receipts/*/evidence.db"; fi

# make test-browser: the report of a real cpu bundle (protocols/quick.json)
# loaded in headless Chromium (Debian's package, installed when missing):
# no console message may appear, and a screenshot is taken
# ($(BUILD)/test-browser/report.png).  A page that does log an error is
# loaded first, so the check is shown to be able to fail.  Then the same
# for a failing bundle (one raw sample in samples.csv doubled, by
# tests/tamper-sample.py): its page must open with the red notice
# (failing.png).
BROWSER_DIR = $(BUILD)/test-browser
CHROMIUM_RUN = timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--window-size=1100,1800 --enable-logging=stderr --v=0

.PHONY: test-browser
test-browser: all
	$(Q)command -v chromium >/dev/null || { echo "  APT     chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	$(Q)rm -rf $(BROWSER_DIR) && mkdir -p $(BROWSER_DIR)
	$(Q)d=$(abspath $(BROWSER_DIR)); \
	printf '<html><body><script>console.error("selftest")</script></body></html>\n' > $$d/bad.html; \
	$(CHROMIUM_RUN) --screenshot=$$d/bad.png file://$$d/bad.html 2> $$d/bad.log || true; \
	grep -q 'CONSOLE.*selftest' $$d/bad.log || { echo "test-browser: the console check cannot see errors"; exit 1; }
	$(Q)$(BUILD)/evident run --protocol protocols/quick.json --backend cpu --db $(BROWSER_DIR)/evidence.db \
	  > $(BROWSER_DIR)/run.log 2>&1
	$(Q)$(BUILD)/evident export --db $(BROWSER_DIR)/evidence.db --out $(BROWSER_DIR)/delivery.zip > $(BROWSER_DIR)/ROOT
	$(Q)$(BUILD)/evident report $(BROWSER_DIR)/delivery.zip --out $(BROWSER_DIR)/report.html
	$(Q)d=$(abspath $(BROWSER_DIR)); \
	$(CHROMIUM_RUN) --screenshot=$$d/report.png file://$$d/report.html 2> $$d/chromium.log; \
	if grep -q 'CONSOLE' $$d/chromium.log; then echo "test-browser: console messages:"; grep 'CONSOLE' $$d/chromium.log; exit 1; fi; \
	test -s $$d/report.png || { echo "test-browser: no screenshot"; exit 1; }; \
	echo "test-browser: report.html of a cpu bundle loads with no console message; screenshot $(BROWSER_DIR)/report.png"
	$(Q)python3 tests/tamper-sample.py $(BROWSER_DIR)/delivery.zip $(BROWSER_DIR)/failing.zip
	$(Q)$(BUILD)/evident report $(BROWSER_DIR)/failing.zip --out $(BROWSER_DIR)/failing.html 2> $(BROWSER_DIR)/failing.log
	$(Q)d=$(abspath $(BROWSER_DIR)); \
	grep -q '<div class="alarm"><strong>This bundle does not verify.</strong>' $$d/failing.html \
	  || { echo "test-browser: the failing bundle's page has no red notice"; exit 1; }; \
	$(CHROMIUM_RUN) --screenshot=$$d/failing.png file://$$d/failing.html 2> $$d/chromium-failing.log; \
	if grep -q 'CONSOLE' $$d/chromium-failing.log; then echo "test-browser: console messages:"; grep 'CONSOLE' $$d/chromium-failing.log; exit 1; fi; \
	test -s $$d/failing.png || { echo "test-browser: no screenshot of the failing page"; exit 1; }; \
	echo "test-browser: a failing bundle's page opens with the red notice and loads with no console message; screenshot $(BROWSER_DIR)/failing.png"
