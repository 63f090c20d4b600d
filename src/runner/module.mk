# src/runner/module.mk: the runner's own build rules (included by the top
# Makefile).  Adds build/evident-worker (one process per job), `make stamp`
# (the .evident-stamp file a copied tree without .git carries) and
# `make evidence`.

WORKER_OBJ := $(BUILD)/obj/src/runner/worker_main.o
# The worker starts once per job: --as-needed drops the libraries it never
# calls (SQLite, libzip, ...), a few ms of loading per job.
WORKER_CUDA_OBJ ?=
WORKER_CUDA_LIBS ?=

all: $(BUILD)/evident-worker $(BUILD)/evident-kernel-host

$(BUILD)/evident-worker: $(WORKER_OBJ) $(WORKER_CUDA_OBJ) $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) -Wl,--as-needed -Wl,-Map,$@.map $^ $(EV_LDLIBS) $(WORKER_CUDA_LIBS) -o $@

# The measurement closure (mk/closure.sh): what the worker and the kernels
# are built from, as the build's own dependency files say (the worker's
# link map names the archive members it pulled; each object's -MMD file
# its source and headers; the CUDA objects' too, or where nvcc is absent
# the host preprocessor's view of their sources), and the files the worker
# reads that no compiler sees.  Every build writes it to
# $(BUILD)/closure.list and, when it differs, to mk/closure.list, the
# committed list every run snapshots and verify-bundle --source-tree and
# make install read (src/common/closure.c): a file moved to another
# folder stays in it, and a list left uncommitted makes the tree dirty.
CLOSURE_LIST := mk/closure.list
CLOSURE_DATA := kernels/build.mk kernels/peer_torch.py kernels/python_host.py kernels/ops_lib_cpu.c db/schema.sql $(wildcard protocols/*.json)
$(BUILD)/closure.list: $(BUILD)/evident-worker mk/closure.sh $(CLOSURE_DATA)
	$(Q)BUILD='$(BUILD)' MAP='$(BUILD)/evident-worker.map' DIRECT='$(WORKER_OBJ) $(WORKER_CUDA_OBJ)' \
	  OBJS='$(LIB_OBJ) $(CUDA_LIB_OBJ)' CUDA_SRC='$(CUDA_LIB_SRC)' CC='$(CC)' \
	  CPPFLAGS='-D_GNU_SOURCE -Isrc -Isrc/common -Ikernels $(DEP_CPPFLAGS)' DATA='$(CLOSURE_DATA)' \
	  sh mk/closure.sh > $@.tmp && mv $@.tmp $@
.PHONY: closure
closure: $(BUILD)/closure.list
	@cmp -s $< $(CLOSURE_LIST) || { cp $< $(CLOSURE_LIST) && \
	  echo "closure: $(CLOSURE_LIST) written from this build's dependency files ($$(wc -l < $<) files): commit it," \
	    "and run make again (the build's identity, mk/build-id.sh, is read from it)"; }
all: closure

# The kernel host (src/runner/khost.h): the process an external kernel runs
# in on the cpu backend, beside the worker.  It links nothing of evident's
# and no sanitizer (whose runtime would make system calls its seccomp
# filter stops): its own flags, whatever OPT and EXTRA_* say.
KHOST_OBJ := $(BUILD)/obj/src/runner/khost_main.o
$(KHOST_OBJ): EV_CFLAGS := -std=c11 $(WARN) -ffp-contract=off -O2 -g
$(BUILD)/evident-kernel-host: $(KHOST_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -O2 -g $(DEP_LDFLAGS) $^ -ldl -lm -o $@

# Tests run workers: make sure the worker exists before any suite runs.
$(TEST_BIN): | $(BUILD)/evident-worker $(BUILD)/evident-kernel-host

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
#     used.  PROTOCOL unset: protocols/hopper.json on cuda, protocols/quick.json
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
#     signature verified, on the host that measured (docs/threat-model.md).
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
	  if [ "$$backend" = cuda ]; then protocol=protocols/hopper.json; else protocol=protocols/quick.json; fi; \
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
# own kernels are built with (kernels/build.mk; ext_compile.h).
$(BUILD)/obj/src/runner/ext_compile.o: EV_CPPFLAGS += -DEV_NVCC='"$(NVCC)"' -DEV_EXT_CUDA_ARCH='"$(or $(CUDA_ARCH),sm_90)"'

# make khost-cost: build/evident-khost-cost, what an external kernel's own
# process costs per batch against calls in the worker (khost_cost_main.c;
# docs/defenses.md states the figures).  Not part of `all`.
.PHONY: khost-cost
khost-cost: $(BUILD)/evident-khost-cost $(BUILD)/evident-kernel-host
$(BUILD)/evident-khost-cost: $(BUILD)/obj/src/runner/khost_cost_main.o $(BUILD)/libevident.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) -ldl -o $@

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
