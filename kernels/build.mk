# kernels/build.mk: the kernels module's build rules (included by the top
# Makefile).  Kernel compile flags live here: they decide what is measured.
#
#   make bench-kernels     CPU benchmark of the host reductions (bytes moved,
#                          time per op, fraction of a streaming-read ceiling
#                          measured in the same run)
#   nvcc found (NVCC, default /usr/local/cuda/bin/nvcc or on PATH):
#     $(BUILD)/cuda/*.o, $(BUILD)/libevident_cuda.a (kernels, selector glue,
#     cub peer, cuda backend of the worker), $(BUILD)/kernel-bench (GPU
#     validator and benchmark), and the worker built with EV_HAVE_CUDA.
#     CUDA_ARCH=sm_90 by default (H200); override for other GPUs.
#   nvcc absent: one line says the CUDA backend is skipped.
#
# The kernels' flags: -O3, no fast math (--use_fast_math is never passed;
# -fmad=false keeps FP32 adds unfused, as the CPU twin computes them),
# -Xptxas -v off by default (KERNEL_PTXAS=-v to see registers).

BENCH_CPU := $(BUILD)/bench-kernels-cpu

$(BENCH_CPU): $(BUILD)/obj/kernels/bench_cpu_main.o $(BUILD)/libevident.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) -o $@

.PHONY: bench-kernels
bench-kernels: $(BENCH_CPU)
	$(BENCH_CPU) $(BENCH_THREADS)

# build/libevident_ops_cpu.so: the plants and checks over host memory for a
# Python arm on the cpu backend (kernels/ops_lib_cpu.c, the C ABI of
# libevident_ops.so below; kernels/python_host.py loads it with ctypes).
# Its own flags, whatever OPT says: the python that loads it has no
# sanitizer runtime.
OPS_LIB_CPU := $(BUILD)/libevident_ops_cpu.so
OPS_LIB_CPU_SRC := kernels/ops_lib_cpu.c kernels/plants.c kernels/dtype.c kernels/oracle.c src/common/status.c \
                   src/common/vocab.c
$(OPS_LIB_CPU): $(OPS_LIB_CPU_SRC) kernels/plants.h kernels/oracle.h kernels/hd.h kernels/dtype.h \
                src/common/vocab.h kernels/build.mk | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(EV_CPPFLAGS) -std=c11 $(WARN) -ffp-contract=off -fno-fast-math -O2 -g -fPIC -shared \
	    $(OPS_LIB_CPU_SRC) -lm -o $@
all: $(OPS_LIB_CPU)

# ---- CUDA ------------------------------------------------------------------

NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
CUDA_ARCH ?= sm_90
# The CUDA objects' sources: built where nvcc is, and part of the
# measurement closure everywhere (src/runner/module.mk, mk/closure.sh).
# The cuda backend of the worker stands with the runner, on the kernels.
# Each schedule's entries are a unit of their own (kernels/reduce_*.cu), so
# that they compile side by side: one unit of them all took most of a build.
# The four rows schedules' units are compiled once a dtype
# (reduce_<schedule>_<dtype>.o, CUDA_DTYPE_UNITS): reduce_default.cu took
# 43.7 s on one core here with its three dtypes, 15.3, 19.7 and 17.7 s
# with one (fp32, fp16, bf16), and the longest unit is the build's
# critical path wherever there are cores for every unit.
CUDA_LIB_SRC := kernels/reduce.cu kernels/reduce_default.cu kernels/reduce_rows1.cu kernels/reduce_rows2.cu \
                kernels/reduce_rows4.cu kernels/reduce_short.cu kernels/reduce_split.cu kernels/reduce_pack.cu kernels/peer_cub.cu \
                kernels/plants_dev.cu src/runner/backend_cuda.cu

ifneq ($(NVCC),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
KERNEL_PTXAS ?=
KERNEL_DEFS ?=
NVCC_FLAGS := -std=c++17 -O3 -arch=$(CUDA_ARCH) -fmad=false -lineinfo $(KERNEL_DEFS) \
              -Xcompiler -Wall,-Wextra,-ffp-contract=off $(if $(KERNEL_PTXAS),-Xptxas $(KERNEL_PTXAS))
NVCC_CPPFLAGS := $(EV_CPPFLAGS)
CUDA_LDLIBS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/targets/x86_64-linux/lib \
               -lcudart_static -ldl -lrt -lpthread -lstdc++
CUDA_DTYPE_UNITS := reduce_default reduce_rows1 reduce_rows2 reduce_rows4
CUDA_DTYPES := FP32:fp32 FP16:fp16 BF16:bf16
# a source's objects: one a dtype for CUDA_DTYPE_UNITS, else one
ev_cuda_objs = $(if $(filter $(1),$(CUDA_DTYPE_UNITS)),$(foreach d,$(CUDA_DTYPES),$(BUILD)/cuda/$(1)_$(lastword \
                   $(subst :, ,$(d))).o),$(BUILD)/cuda/$(1).o)
CUDA_LIB_OBJ := $(foreach s,$(CUDA_LIB_SRC),$(call ev_cuda_objs,$(notdir $(s:.cu=))))

# (an object is named by its source's name alone: an archive member's
# name, which mk/closure.sh matches)
$(BUILD)/cuda/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_CPPFLAGS) $(NVCC_FLAGS) -MMD -MP -c $< -o $@
# a unit of one dtype: $(1) its id, $(2) its name (CUDA_DTYPES)
define ev_cuda_dtype_rule
$(BUILD)/cuda/%_$(2).o: kernels/%.cu
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  NVCC    $$< ($(2))")
	$$(Q)$$(NVCC) $$(NVCC_CPPFLAGS) $$(NVCC_FLAGS) -DEV_UNIT_DTYPE=$(1) -DEV_UNIT_DTNAME=$(2) -MMD -MP -c $$< -o $$@
endef
$(foreach d,$(CUDA_DTYPES),$(eval $(call ev_cuda_dtype_rule,$(firstword $(subst :, ,$(d))),$(lastword $(subst :, ,$(d))))))
$(BUILD)/cuda/%.o: src/runner/%.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_CPPFLAGS) $(NVCC_FLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libevident_cuda.a: $(CUDA_LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# build/kernel-bench: validates every kernel against its CPU twin and the
# oracle, and prints bytes moved and the fraction of the ceiling (GPU host).
$(BUILD)/kernel-bench: $(BUILD)/cuda/kernel_bench_main.o $(BUILD)/libevident_cuda.a $(BUILD)/libevident.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EV_CFLAGS) $(EV_LDFLAGS) $^ $(EV_LDLIBS) $(CUDA_LDLIBS) -o $@

# build/libevident_ops.so: the plants and checks for the torch-compile
# peer, which loads it with ctypes (kernels/ops_lib.cu; the same kernels
# and rules as the worker's, kernels/plants_dev.cu and kernels/plants.h).
OPS_LIB := $(BUILD)/libevident_ops.so
OPS_LIB_SRC := kernels/ops_lib.cu kernels/plants_dev.cu kernels/plants.c kernels/dtype.c kernels/oracle.c \
               src/common/status.c src/common/vocab.c
$(OPS_LIB): $(OPS_LIB_SRC) kernels/plants.h kernels/plants_cuda.h kernels/oracle.h kernels/hd.h src/common/vocab.h kernels/build.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $@")
	$(Q)$(NVCC) $(NVCC_CPPFLAGS) $(NVCC_FLAGS) -Xcompiler -fPIC -shared -cudart static $(OPS_LIB_SRC) -o $@

# The worker gets the cuda backend (src/runner/module.mk links these).
WORKER_CUDA_LIBS := $(BUILD)/libevident_cuda.a $(BUILD)/libevident.a $(CUDA_LDLIBS)
$(BUILD)/evident-worker: $(BUILD)/libevident_cuda.a
$(BUILD)/obj/src/runner/worker_main.o: EV_CPPFLAGS += -DEV_HAVE_CUDA
$(BUILD)/obj/src/runner/worker_main.o: kernels/build.mk

all: $(BUILD)/kernel-bench $(BUILD)/libevident_cuda.a $(OPS_LIB)
.PHONY: cuda
cuda: $(BUILD)/kernel-bench $(BUILD)/evident-worker $(OPS_LIB)

-include $(CUDA_LIB_OBJ:.o=.d) $(BUILD)/cuda/kernel_bench_main.d
else
$(info kernels/build.mk: nvcc not found: the CUDA backend is skipped (cpu backend only))
endif
