# src/runner/module.mk: the runner's own build rules (included by the top
# Makefile).  Adds build/evident-worker (one process per job), `make stamp`
# (the .evident-stamp file a copied tree without .git carries) and
# `make evidence`.

WORKER_OBJ := $(BUILD)/obj/src/runner/worker_main.o
WORKER_CUDA_OBJ ?=
WORKER_CUDA_LIBS ?=

all: $(BUILD)/evident-worker

$(BUILD)/evident-worker: $(WORKER_OBJ) $(WORKER_CUDA_OBJ) $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) $(WORKER_CUDA_LIBS) -o $@

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
