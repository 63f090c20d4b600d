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
