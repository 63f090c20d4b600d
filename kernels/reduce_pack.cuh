/*
 * reduce_pack.cuh: the packed program (kernels v11, launch rule 2 of
 * kernels/selector.h; docs/perf-notes.md, "v11"): a default or rowsK
 * program of b >= 2 lean rows of t = 32 lanes and at most two chunks a
 * lane (rows of 64 chunks or fewer that the thin program does not take) by
 * half its threads, one warp two adjacent rows.  Thread k executes lane k
 * of both rows, each as in the t-lane lean program (the same chunks into
 * the same lane's slots, the slot tree, the lane butterfly): the same
 * bits.  What changes is the launch: half the warps, two rows' loads in
 * flight a thread, as torch.compile's kernel on 1024x512 fp16
 * (docs/perf-notes.md, "After v10").  Its own entry, which the selector's
 * plan names (so that no other program's code moves: v10's code added to
 * the shared entry moved the time of paths that did not change).
 */
#ifndef EV_REDUCE_PACK_CUH
#define EV_REDUCE_PACK_CUH

#include "reduce_default.cuh"

/*
 * Rows [blockIdx.x * b, + b) of in, two a warp, 2 blockDim.x / 32 rows a
 * pass (the unpacked program's b rows and its passes' rows), every row on
 * 16 bytes and of whole chunks (the lean program's rows), both rows' loads
 * in flight at once.
 */
template <int OP, int DT>
__device__ __forceinline__ void ev_pack_rows(const void *in, void *out, int64_t R, int64_t N, int64_t stride,
                                             int b)
{
    const int V = 16 / ev_dt<DT>::size;
    int warps = (int)blockDim.x >> 5, g = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    int64_t row0 = (int64_t)blockIdx.x * b;
    for (int base = 0; base < b; base += 2 * warps) {
        int i0 = base + 2 * g, i1 = i0 + 1;
        int64_t r0 = row0 + i0, r1 = row0 + i1;
        int ok0 = i0 < b && r0 < R, ok1 = i1 < b && r1 < R;
        const unsigned char *in8 = reinterpret_cast<const unsigned char *>(in);
        const unsigned char *p0 = in8 + (ok0 ? r0 * stride * ev_dt<DT>::size : 0);
        const unsigned char *p1 = in8 + (ok1 ? r1 * stride * ev_dt<DT>::size : 0);
        ev_acc<OP, DT> a0, a1;
        uint4 v0[4], v1[4];
        a0.init();
        a1.init();
        ev_lean_load<OP, DT, 32>(v0, p0, ok0 ? (int)(N / V) : 0, lane);
        ev_lean_load<OP, DT, 32>(v1, p1, ok1 ? (int)(N / V) : 0, lane);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            a0.vec(v0[k]);
            a1.vec(v1[k]);
        }
        float y0 = ev_group<OP, DT>::combine(a0, 32, lane, nullptr);
        float y1 = ev_group<OP, DT>::combine(a1, 32, lane, nullptr);
        if (ok0 && lane == 0)
            ev_dt<DT>::store(out, r0, ev_finished<OP>(y0, N));
        if (ok1 && lane == 1)
            ev_dt<DT>::store(out, r1, ev_finished<OP>(y1, N));
    }
}

#define EV_PACK_SIG(opname, dtname)                                                                    \
    extern "C" __global__ void __launch_bounds__(512) opname##_##dtname##_pack(                        \
        const void *in, void *out, long long R, long long N, long long stride, int b)
#define EV_PACK_ENTRY(OP, opname, DT, dtname)                                                          \
    EV_PACK_SIG(opname, dtname)                                                                        \
    {                                                                                                  \
        ev_pack_rows<EV_OP_##OP, EV_DTYPE_##DT>(in, out, R, N, stride, b);                             \
    }
#define EV_PACK_DECL(OP, opname, DT, dtname) EV_PACK_SIG(opname, dtname);

#endif
