# src/runner/module.mk: the runner's own build rules (included by the top
# Makefile).  Adds build/evident-worker (one process per job), `make stamp`
# (the .evident-stamp file a copied tree without .git carries) and
# `make evidence`.

WORKER_OBJ := $(BUILD)/obj/src/runner/worker_main.o
# The worker starts once per job: --as-needed drops the libraries it never
# calls (SQLite, libzip, ...), a few ms of loading per job.
WORKER_CUDA_OBJ ?=
WORKER_CUDA_LIBS ?=

all: $(BUILD)/evident-worker

$(BUILD)/evident-worker: $(WORKER_OBJ) $(WORKER_CUDA_OBJ) $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) -Wl,--as-needed $^ $(EV_LDLIBS) $(WORKER_CUDA_LIBS) -o $@

# Tests run workers: make sure the worker exists before any suite runs.
$(TEST_BIN): | $(BUILD)/evident-worker

.PHONY: stamp
# Writes .evident-stamp ({"commit": ..., "dirty": ...}) for copying the tree
# to a host without .git; evident run reads it only when git is absent.
stamp:
	$(Q)c=$$(git rev-parse HEAD) && d=$$(test -z "$$(git status --porcelain)" && echo false || echo true) && \
	  printf '{"commit": "%s", "dirty": %s}\n' "$$c" "$$d" > .evident-stamp && cat .evident-stamp

# The environment receipt names the compiler flags the build used.
$(BUILD)/obj/src/runner/supervisor.o: EV_CPPFLAGS += -DEV_BUILD_CFLAGS='"$(subst ",,$(subst ',,$(EV_CFLAGS)))"'

# make evidence [BACKEND=cuda|cpu] [PROTOCOL=...]: build -> evident run ->
# evident export -> verify-bundle, into $(BUILD)/evidence/:
#   - BACKEND unset: cuda when the worker was built with the cuda backend
#     and nvidia-smi lists a device; otherwise one line says why and cpu is
#     used.  PROTOCOL unset: protocols/h200.json on cuda, protocols/quick.json
#     on cpu.
#   - evidence.db absent: a new run.  Present: `evident run --resume`, which
#     continues the store's last run where it stopped (a long GPU protocol
#     in several calls), does nothing more when that run is finished (the
#     export is then redone from the store), and refuses, with exit 2, a
#     different protocol or backend (remove $(BUILD)/evidence for a new run).
#   - export to delivery.zip (it prints the root digest), then verify-bundle
#     with --source-tree . and --expect-root that digest; the last line
#     printed is the root digest.
BACKEND ?=
PROTOCOL ?=
EVIDENCE_DIR := $(BUILD)/evidence
.PHONY: evidence
evidence: all
	$(Q)backend='$(BACKEND)'; \
	if [ -z "$$backend" ]; then \
	  if [ -z '$(WORKER_CUDA_LIBS)' ]; then \
	    echo "make evidence: no cuda backend built (nvcc not found): using the cpu backend"; backend=cpu; \
	  elif ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then \
	    echo "make evidence: no CUDA device answers nvidia-smi: using the cpu backend"; backend=cpu; \
	  else \
	    backend=cuda; \
	  fi; \
	fi; \
	protocol='$(PROTOCOL)'; \
	if [ -z "$$protocol" ]; then \
	  if [ "$$backend" = cuda ]; then protocol=protocols/h200.json; else protocol=protocols/quick.json; fi; \
	fi; \
	mkdir -p $(EVIDENCE_DIR) || exit 2; \
	db=$(EVIDENCE_DIR)/evidence.db; \
	if [ -f "$$db" ]; then resume=--resume; echo "make evidence: $$db exists: resuming its last run"; else resume=; fi; \
	./$(BUILD)/evident run --protocol "$$protocol" --backend "$$backend" --db "$$db" $$resume || exit $$?; \
	root=$$(./$(BUILD)/evident export --db "$$db" --out $(EVIDENCE_DIR)/delivery.zip) || exit $$?; \
	./$(BUILD)/verify-bundle $(EVIDENCE_DIR)/delivery.zip --source-tree . --expect-root "$$root" || exit $$?; \
	echo "$$root"
