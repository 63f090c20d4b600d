"""sum.py: row sums in Triton, measured by evident as a Python arm (cuda).

evident calls each entry as fn(x, out) (docs/external-kernels.md, "Python
arms"): x is the case's input, a torch tensor on the device of R rows and
N columns whose rows are x.stride(0) elements apart, out the R outputs in
the case's dtype.  The function launches its work on torch's current
stream, writes out and returns None; evident captures 100 calls in one
CUDA graph (torch.cuda.graph) with its plants and checks between them and
times the graph's replays as it times its own kernels.

One program per row: it walks the row in blocks of BLOCK elements, adds
them in fp32 (the oracle's bound is for fp32 arithmetic or better) and
stores the sum rounded to the storage dtype.
"""
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
        acc += v.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def _launch(x, out, rows):
    if rows == 0:
        return
    cols = x.shape[1]
    block = min(4096, max(128, triton.next_power_of_2(cols)))
    _row_sum[(rows,)](x, out, cols, x.stride(0), BLOCK=block)


def reduce_sum(x, out):
    _launch(x, out, x.shape[0])


def reduce_sum_offbyone(x, out):
    """The same kernel launched on one row too few: the last row keeps
    whatever it held (the validation names it)."""
    _launch(x, out, x.shape[0] - 1)
