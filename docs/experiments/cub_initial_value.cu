// Experiment (not part of the product, not built by make): where did the
// cub peer's +0 come from?  It runs cub::DeviceSegmentedReduce over fp32
// rows (all -0, negative, one -0.27 among -5, all +0, mixed) of N = 1 ..
// 100000, once with a transform output iterator over the uint32_t bits
// (the peer as it was: CUB takes the initial value's type from the output
// iterator, so -Inf and -0.0 become integer 0) and once with an output
// iterator whose value_type is void (the fix).  Run on the H200 host:
//   nvcc -O2 -arch=sm_90 -std=c++17 -Ikernels -Isrc/common \
//        -o /tmp/cubexp docs/experiments/cub_initial_value.cu && /tmp/cubexp
// Output of 2026-11-29: cub_initial_value.h200.txt beside this file.
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#define EV_DEVICE_CODE_ONLY
#include "reduce_default.cuh"

struct ld32 { const float *in; __host__ __device__ float operator()(long long i) const { return in[i]; } };
struct offs { long long stride, add; __host__ __device__ long long operator()(long long i) const { return i * stride + add; } };
struct st32 { __host__ __device__ uint32_t operator()(float y) const { uint32_t u; memcpy(&u, &y, 4); return u; } };
template <int OP> struct opf { __host__ __device__ float operator()(float a, float b) const {
#ifdef __CUDA_ARCH__
  return ev_opr<OP>::apply(a, b);
#else
  return a + b;
#endif
} };
// B: an output iterator whose value_type is void, so CUB takes InitT from the input (float)
struct refout { uint32_t *p; __host__ __device__ const refout &operator=(float y) const { uint32_t u; memcpy(&u, &y, 4); *p = u; return *this; } };
struct outit {
  using value_type = void; using difference_type = long long; using pointer = void; using reference = refout;
  using iterator_category = cuda::std::random_access_iterator_tag;
  uint32_t *p;
  __host__ __device__ refout operator[](long long i) const { return refout{p + i}; }
  __host__ __device__ refout operator*() const { return refout{p}; }
  __host__ __device__ outit operator+(long long i) const { return outit{p + i}; }
};
static void run(const char *what, int op, int variant, const float *d_in, int rows, long long cols, long long stride, uint32_t *d_out, uint32_t *h_out) {
  thrust::counting_iterator<long long> zero(0);
  auto begin = thrust::make_transform_iterator(zero, offs{stride, 0});
  auto end = thrust::make_transform_iterator(zero, offs{stride, cols});
  void *temp = NULL; size_t tb = 0; cudaError_t e;
  for (int pass = 0; pass < 2; pass++) {
    if (variant == 0) {
      auto in = thrust::make_transform_iterator(zero, ld32{d_in});
      auto out = thrust::make_transform_output_iterator(d_out, st32());
      if (op) e = cub::DeviceSegmentedReduce::Reduce(temp, tb, in, out, rows, begin, end, opf<1>(), -INFINITY, 0);
      else e = cub::DeviceSegmentedReduce::Reduce(temp, tb, in, out, rows, begin, end, opf<0>(), -0.0f, 0);
    } else {
      auto in = thrust::make_transform_iterator(zero, ld32{d_in});
      outit out{d_out};
      if (op) e = cub::DeviceSegmentedReduce::Reduce(temp, tb, in, out, rows, begin, end, opf<1>(), -INFINITY, 0);
      else e = cub::DeviceSegmentedReduce::Reduce(temp, tb, in, out, rows, begin, end, opf<0>(), -0.0f, 0);
    }
    if (e) { printf("%s: error %s\n", what, cudaGetErrorString(e)); return; }
    if (pass == 0) cudaMalloc(&temp, tb ? tb : 1);
  }
  cudaDeviceSynchronize();
  cudaMemcpy(h_out, d_out, rows * 4, cudaMemcpyDeviceToHost);
  cudaFree(temp);
  printf("%-34s op=%s variant=%s:", what, op ? "max" : "sum", variant ? "void-out" : "current ");
  for (int r = 0; r < rows; r++) printf(" %08x", h_out[r]);
  printf("\n");
}

int main() {
  printf("CUB_VERSION %d\n", CUB_VERSION);
  long long Ns[] = {1, 2, 77, 1024, 8192, 100000};
  for (int k = 0; k < 6; k++) {
    long long N = Ns[k], stride = N + 3; int rows = 5;
    float *h = (float *)malloc(rows * stride * 4);
    for (long long i = 0; i < rows * stride; i++) h[i] = 12345.0f;  // padding junk
    for (long long j = 0; j < N; j++) {
      h[0 * stride + j] = -0.0f;                 // all -0: max -0, sum -0
      h[1 * stride + j] = -1.0f - (float)(j % 7); // negative: max -1
      h[2 * stride + j] = (j == N / 2) ? -0.27f : -5.0f; // max -0.27
      h[3 * stride + j] = 0.0f;                  // all +0: max +0, sum +0
      h[4 * stride + j] = (float)(j % 5) - 2.0f;  // mixed: max 2 (or -2 for N=1)
    }
    float *d; uint32_t *dout, hout[8];
    cudaMalloc(&d, rows * stride * 4); cudaMalloc(&dout, 64);
    cudaMemcpy(d, h, rows * stride * 4, cudaMemcpyHostToDevice);
    char what[64]; snprintf(what, sizeof what, "N=%lld", N);
    for (int op = 0; op < 2; op++) for (int v = 0; v < 2; v++) run(what, op, v, d, rows, N, stride, dout, hout);
    cudaFree(d); cudaFree(dout); free(h);
  }
  printf("expect max: bf800000? no: row0 80000000 row1 bf800000 row2 be8a3d71 row3 00000000\n");
  printf("expect sum: row0 80000000 row3 00000000\n");
  return 0;
}
