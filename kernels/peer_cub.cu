/*
 * peer_cub.cu: the `cub` peer (peer_cub.h).
 *
 * Variants, one line each:
 *   every op x dtype (src/common/vocab.h): DeviceSegmentedReduce::Reduce
 *   (Sum, Max and Min as our operator ev_opr: the same NaN and signed-zero
 *   rules as ours; CUB has no mean: reduce_mean is its Sum, divided by N
 *   in the output iterator, one kernel as torch's mean is) with
 *   a float-valued input iterator, row offsets i * stride and i * stride + N,
 *   a float-accepting output iterator whose value_type is void (so the
 *   initial value stays a float: see ev_cub_out) that applies the op's
 *   finish (ev_finished, as our kernels do) before the store, and the
 *   same NaN rules as ours.
 */
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_runtime.h>
#include <stdio.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <type_traits>

#include "reduce_default.cuh"

extern "C" {
#include "status.h"
#include "peer_cub.h"
}

/* Element i of the input as float. */
template <int DT> struct ev_cub_load {
    const unsigned char *in;
    __host__ __device__ float operator()(long long i) const
    {
#ifdef __CUDA_ARCH__
        return ev_dt<DT>::load(in, i);
#else
        return 0.0f;
#endif
    }
};

/* Row i's begin (or end, with add = N) offset. */
struct ev_cub_offset {
    long long stride, add;
    __host__ __device__ long long operator()(long long i) const { return i * stride + add; }
};

/* The float result of a row of n elements, finished as the op says
 * (ev_finished: reduce_default.cuh) and rounded to the storage dtype,
 * stored as its bits. */
template <int OP, int DT, typename T> struct ev_cub_ref {
    T *p;
    long long n;
    __host__ __device__ const ev_cub_ref &operator=(float y) const
    {
#ifdef __CUDA_ARCH__
        uint32_t x;
        y = ev_finished<OP>(y, n);
        if (DT == EV_DTYPE_FP16)
            x = ev_d_f32_to_fp16(y);
        else if (DT == EV_DTYPE_BF16)
            x = ev_d_f32_to_bf16(y);
        else {
            x = __float_as_uint(y);
            x = (x & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : x;
        }
        *p = (T)x;
#else
        (void)y;
#endif
        return *this;
    }
};

/*
 * The output iterator.  Its value_type is void on purpose: CUB 3.0's
 * DeviceSegmentedReduce takes the type of the initial value from the
 * output iterator's value_type when it has one, and a transform output
 * iterator over the storage bits made that uint32_t / uint16_t: -Inf (MAX)
 * and -0.0 (SUM) were converted to the integer 0, i.e. the reduction began
 * at +0, so a row whose maximum is -0 or negative came out +0, and a SUM
 * row of -0 elements +0 (the defect the first H200 run's notes left open;
 * docs/perf-notes.md).  With void, the initial value keeps the input's
 * type, float.
 */
template <int OP, int DT, typename T> struct ev_cub_out {
    using value_type = void;
    using difference_type = long long;
    using pointer = void;
    using reference = ev_cub_ref<OP, DT, T>;
    using iterator_category = cuda::std::random_access_iterator_tag;
    T *p;
    long long n; /* a row's elements, for the op's finish */
    __host__ __device__ ev_cub_ref<OP, DT, T> operator[](long long i) const
    {
        return ev_cub_ref<OP, DT, T>{p + i, n};
    }
    __host__ __device__ ev_cub_ref<OP, DT, T> operator*() const { return ev_cub_ref<OP, DT, T>{p, n}; }
    __host__ __device__ ev_cub_out operator+(long long i) const { return ev_cub_out{p + i, n}; }
};

template <int OP> struct ev_cub_op {
    __host__ __device__ float operator()(float a, float b) const
    {
#ifdef __CUDA_ARCH__
        return ev_opr<OP>::apply(a, b);
#else
        return a + b;
#endif
    }
};

struct ev_cub_peer {
    ev_binding b;
    void *temp;
    size_t temp_bytes;
};

/* Runs (temp == NULL: sizes) the segmented reduction for one op/dtype. */
template <int OP, int DT>
static cudaError_t ev_cub_run(const ev_binding *b, void *temp, size_t *temp_bytes, cudaStream_t s)
{
    typedef typename std::conditional<ev_dt<DT>::size == 4, uint32_t, uint16_t>::type T; /* storage bits */
    thrust::counting_iterator<long long> zero(0);
    ev_cub_load<DT> ld = {(const unsigned char *)b->in};
    auto in = thrust::make_transform_iterator(zero, ld);
    auto begin = thrust::make_transform_iterator(zero, ev_cub_offset{b->shape.stride, 0});
    auto end = thrust::make_transform_iterator(zero, ev_cub_offset{b->shape.stride, b->shape.cols});
    ev_cub_out<OP, DT, T> out{(T *)b->out, (long long)b->shape.cols};
    const int c = ev_combine_of(OP);
    float init = c == EV_COMBINE_SUM   ? -0.0f /* the combine's identity; stays a float: ev_cub_out */
                 : c == EV_COMBINE_MAX ? -__builtin_huge_valf()
                                       : __builtin_huge_valf();
    return cub::DeviceSegmentedReduce::Reduce(temp, *temp_bytes, in, out, (int)b->shape.rows, begin, end,
                                              ev_cub_op<OP>(), init, s);
}

/* Dispatches on op and dtype: every op x dtype of the vocabulary. */
static cudaError_t ev_cub_dispatch(const ev_binding *b, void *temp, size_t *temp_bytes, cudaStream_t s)
{
#define EV_CUB_CASE(OP, opname, DT, dtname)                                                            \
    if (b->shape.op == EV_OP_##OP && b->shape.dtype == EV_DTYPE_##DT)                                  \
        return ev_cub_run<EV_OP_##OP, EV_DTYPE_##DT>(b, temp, temp_bytes, s);
    EV_OPS_BY_DTYPES(EV_CUB_CASE)
#undef EV_CUB_CASE
    return cudaErrorInvalidValue; /* a binding the check refused */
}

extern "C" ev_status ev_cub_peer_new(const ev_binding *b, ev_cub_peer **out, ev_err *err)
{
    ev_cub_peer *p = (ev_cub_peer *)calloc(1, sizeof *p);
    cudaError_t e;
    if (p == NULL)
        return ev_err_set(err, EV_ENOMEM, "cub peer: out of memory");
    p->b = *b;
    if (b->shape.rows > 0x7fffffff) {
        free(p);
        return ev_err_set(err, EV_EINVAL, "cub peer: more than 2^31-1 rows");
    }
    if (b->shape.rows > 0) {
        e = ev_cub_dispatch(b, NULL, &p->temp_bytes, 0);
        if (e == cudaSuccess)
            e = cudaMalloc(&p->temp, p->temp_bytes ? p->temp_bytes : 1);
        if (e != cudaSuccess) {
            free(p);
            return ev_err_set(err, EV_ECUDA, "cub peer: temp storage: %s", cudaGetErrorString(e));
        }
    }
    *out = p;
    return EV_OK;
}

extern "C" ev_status ev_cub_peer_launch(ev_cub_peer *p, void *stream, ev_err *err)
{
    return ev_cub_peer_launch_on(p, &p->b, stream, err);
}

extern "C" ev_status ev_cub_peer_launch_on(ev_cub_peer *p, const ev_binding *b, void *stream, ev_err *err)
{
    cudaError_t e;
    if (b->shape.rows == 0)
        return EV_OK;
    if (b->shape.rows != p->b.shape.rows || b->shape.cols != p->b.shape.cols ||
        b->shape.stride != p->b.shape.stride || b->shape.op != p->b.shape.op || b->shape.dtype != p->b.shape.dtype)
        return ev_err_set(err, EV_EINVAL, "cub peer: a binding of another shape than the one it was prepared for");
    (void)cudaGetLastError();
    e = ev_cub_dispatch(b, p->temp, &p->temp_bytes, (cudaStream_t)stream);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return ev_err_set(err, EV_ECUDA, "cub peer: %s", cudaGetErrorString(e));
    return EV_OK;
}

extern "C" void ev_cub_peer_free(ev_cub_peer *p)
{
    if (p == NULL)
        return;
    if (p->temp != NULL)
        (void)cudaFree(p->temp);
    free(p);
}

/* CUB_VERSION is MMMmmmpp (cub/version.cuh); the parts as text, at compile time. */
extern "C" const char *ev_cub_peer_version(void)
{
    static char v[24];
    if (!v[0])
        snprintf(v, sizeof v, "%d.%d.%d", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100);
    return v;
}
