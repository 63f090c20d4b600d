"""sum.py: row sums and maxima with numpy, measured by evident as a Python arm.

evident calls each entry as fn(x, out) (docs/external-kernels.md, "Python
arms"): x is the case's input, a read-only numpy view of R rows and N
columns (each row `stride` elements after the last), out the R outputs in
the case's dtype.  The function writes out and returns None.  The sums
accumulate in fp32 (the oracle's bound is for fp32 arithmetic or better)
and are rounded to the storage dtype when stored.
"""
import numpy as np


def reduce_sum_fp32(x, out):
    np.sum(x, axis=1, dtype=np.float32, out=out)


def reduce_sum_fp16(x, out):
    out[:] = np.sum(x, axis=1, dtype=np.float32)


def reduce_max_fp32(x, out):
    np.max(x, axis=1, out=out)


def reduce_max_fp16(x, out):
    np.max(x, axis=1, out=out)
