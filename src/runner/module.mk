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
# Writes .evident-stamp ({"commit", "dirty", "tree"}) for copying the tree
# to a host whose .git is missing, partial or stale: evident run there uses
# the stamp when the measured files' tree hash is the stamp's.
stamp: $(BUILD)/evident
	$(Q)$(BUILD)/evident stamp

# The environment receipt names the compiler flags the build used.
$(BUILD)/obj/src/runner/sup_finish.o: EV_CPPFLAGS += -DEV_BUILD_CFLAGS='"$(subst ",,$(subst ',,$(EV_CFLAGS)))"'

# make evidence [BACKEND=cuda|cpu] [PROTOCOL=...] [FRESH=1]: build ->
# evident run --strict -> evident export -> verify-bundle -> evident report,
# into $(BUILD)/evidence/:
#   - BACKEND unset: cuda when the worker was built with the cuda backend
#     and nvidia-smi lists a device; otherwise one line says why and cpu is
#     used.  PROTOCOL unset: protocols/h200.json on cuda, protocols/quick.json
#     on cpu.
#   - FRESH=1: an existing $(BUILD)/evidence is moved aside (never deleted)
#     to $(BUILD)/evidence.kept-<UTC time>, and a new run starts.
#   - evidence.db absent: a new run.  Present: `evident run --resume`, which
#     continues the store's last run where it stopped (a long GPU protocol
#     in several calls), does nothing more when that run is finished (the
#     export is then redone from the store), and refuses, with exit 2, a
#     different protocol or backend: this target then says so and names
#     FRESH=1.
#   - export to delivery.zip (it prints the root digest), verify-bundle
#     with --source-tree . and --expect-root that digest, report.html; the
#     report's path is printed, and the root digest is the last line.
#   - exit 1, after the bundle and report are written, when the run did not
#     complete every job after rescue (--strict) or did not finish; the
#     message says which, and that the store is kept (FRESH=1 starts anew).
#   - SIGN_KEY=KEY (a key from `evident keygen`, KEY.pub beside it): the
#     bundle is then signed (delivery.zip.intoto.json, src/sign/) and the
#     signature verified, on the host that measured (issue 21, item 4).
BACKEND ?=
PROTOCOL ?=
SIGN_KEY ?=
FRESH ?=
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
	dir=$(EVIDENCE_DIR); \
	if [ -n '$(FRESH)' ] && [ -e "$$dir" ]; then \
	  kept=$$dir.kept-$$(date -u +%Y%m%dT%H%M%SZ); mv "$$dir" "$$kept" || exit 2; \
	  echo "make evidence: FRESH=1: the previous store is kept as $$kept"; \
	fi; \
	mkdir -p "$$dir" || exit 2; \
	db=$$dir/evidence.db; \
	if [ -f "$$db" ]; then resume=--resume; echo "make evidence: $$db exists: resuming its last run"; else resume=; fi; \
	./$(BUILD)/evident run --protocol "$$protocol" --backend "$$backend" --db "$$db" $$resume --strict > "$$dir/run.txt"; \
	runrc=$$?; cat "$$dir/run.txt"; \
	if [ $$runrc = 2 ]; then \
	  if [ -n "$$resume" ]; then \
	    echo "make evidence: $$db holds a run of another protocol or backend (above); 'make evidence FRESH=1' starts a new run of $$protocol on $$backend and keeps that store"; \
	  fi; \
	  exit 2; \
	fi; \
	root=$$(./$(BUILD)/evident export --db "$$db" --out "$$dir/delivery.zip") || exit $$?; \
	./$(BUILD)/verify-bundle "$$dir/delivery.zip" --source-tree . --expect-root "$$root"; verrc=$$?; \
	./$(BUILD)/evident report "$$dir/delivery.zip" --out "$$dir/report.html" && \
	  echo "make evidence: report: $$dir/report.html"; \
	if [ $$runrc != 0 ]; then \
	  if grep -q '^run [0-9]*: ' "$$dir/run.txt"; then \
	    echo "make evidence: the run in $$dir finished, but a job failed after its rescue (above, and in the report); the store is kept: 'make evidence FRESH=1' starts a new run"; \
	  else \
	    echo "make evidence: the run in $$dir did not finish (above): 'make evidence' resumes it, 'make evidence FRESH=1' starts a new one"; \
	  fi; \
	  exit 1; \
	fi; \
	[ $$verrc = 0 ] || exit $$verrc; \
	if [ -n '$(SIGN_KEY)' ]; then \
	  ./$(BUILD)/evident sign "$$dir/delivery.zip" --key '$(SIGN_KEY)' >/dev/null && \
	  ./$(BUILD)/verify-bundle "$$dir/delivery.zip" --key '$(SIGN_KEY).pub' --expect-root "$$root" >/dev/null || exit $$?; \
	  echo "make evidence: signed: $$dir/delivery.zip.intoto.json (verify-bundle $$dir/delivery.zip --key $(SIGN_KEY).pub)"; \
	fi; \
	echo "$$root"

# External cuda kernels are built with the nvcc and the architecture our
# own kernels are built with (kernels/build.mk; ext_build.h).
$(BUILD)/obj/src/runner/ext_build.o: EV_CPPFLAGS += -DEV_NVCC='"$(NVCC)"' -DEV_EXT_CUDA_ARCH='"$(or $(CUDA_ARCH),sm_90)"'

# The measured code this build is made from (runner/build_id.h): its tree
# hash and commit, generated by mk/build-id.sh on every make (FORCE) but
# rewritten only when they change, into libevident.a like the schema.
BUILD_ID_C := $(BUILD)/gen/build_id.c
BUILD_ID_O := $(BUILD)/obj/gen/build_id.o

.PHONY: build-id-force
$(BUILD_ID_C): build-id-force
	$(Q)sh mk/build-id.sh $@

$(BUILD_ID_O): $(BUILD_ID_C) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(EV_CPPFLAGS) $(EV_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libevident.a: $(BUILD_ID_O)
LIB_OBJ += $(BUILD_ID_O)
