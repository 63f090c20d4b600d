# src/bundle/module.mk: the bundle module's own targets.
#
#   make receipts   re-exports every committed receipts/<host>/evidence.db
#                   with the current code (no GPU): receipts/<host>/delivery.zip
#                   and receipts/<host>/ROOT (the root digest, one line) are
#                   rewritten.  The ROOT is written only when the export
#                   succeeded (through a temporary file), so a failed export
#                   leaves the old files in place and make stops.

.PHONY: receipts
RECEIPT_DBS := $(wildcard receipts/*/evidence.db)

receipts: $(BUILD)/evident
	$(Q)set -e; for db in $(RECEIPT_DBS); do \
	  dir=$$(dirname $$db); \
	  $(BUILD)/evident export --db $$db --out $$dir/delivery.zip > $$dir/ROOT.tmp; \
	  mv $$dir/ROOT.tmp $$dir/ROOT; \
	  echo "  RECEIPT $$dir: $$(cat $$dir/ROOT)"; \
	done; \
	if [ -z "$(RECEIPT_DBS)" ]; then echo "  RECEIPT no receipts/*/evidence.db"; fi
