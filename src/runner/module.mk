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

# make evidence [BACKEND=cuda|cpu] [PROTOCOL=...]: build, run every phase
# into $(BUILD)/evidence/evidence.db.  Without BACKEND it uses cuda when a
# device answers nvidia-smi and the worker was built with the cuda backend,
# else says so in one line and uses cpu.  PROTOCOL defaults to
# protocols/h200.json on cuda and protocols/quick.json on cpu.  Export and
# verification follow once the bundle module lands; until then it stops
# after the run and says so.
BACKEND ?=
PROTOCOL ?=
evidence: all
	$(Q)backend='$(BACKEND)'; \
	if [ -z "$$backend" ]; then \
	  if [ -n '$(WORKER_CUDA_OBJ)' ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	    backend=cuda; \
	  else \
	    echo "make evidence: no CUDA device or no cuda backend built: using the cpu backend"; backend=cpu; \
	  fi; \
	fi; \
	protocol='$(PROTOCOL)'; \
	if [ -z "$$protocol" ]; then \
	  if [ "$$backend" = cuda ]; then protocol=protocols/h200.json; else protocol=protocols/quick.json; fi; \
	fi; \
	mkdir -p $(BUILD)/evidence && \
	./$(BUILD)/evident run --protocol "$$protocol" --backend "$$backend" --db $(BUILD)/evidence/evidence.db && \
	if [ -x ./$(BUILD)/evident ] && ./$(BUILD)/evident export --help >/dev/null 2>&1; then \
	  ./$(BUILD)/evident export --db $(BUILD)/evidence/evidence.db --out $(BUILD)/evidence/delivery.zip && \
	  ./$(BUILD)/verify-bundle $(BUILD)/evidence/delivery.zip; \
	else \
	  echo "make evidence: the run is in $(BUILD)/evidence/evidence.db; export and verify-bundle are not built yet: stopping after the run"; \
	fi
