/*
 * binding.c: the binding check (see binding.h): every refusal a kernel
 * launch depends on, decided on addresses and sizes alone.
 */
#include "binding.h"

#include <string.h>

#include "buf.h"

/* Returns the largest power of two dividing p's address, at most 256. */
size_t ev_input_alloc_bytes(size_t len)
{
    return len < 16 ? 16 : (len + 15) & ~(size_t)15;
}

unsigned ev_binding_align(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    unsigned al = 1;
    while (al < 256 && (a & al) == 0)
        al <<= 1;
    return al;
}

ev_status ev_binding_check(ev_binding *b, ev_err *err)
{
    const ev_shape *s = &b->shape;
    size_t es = ev_dtype_size(s->dtype);
    size_t in_need = 0, out_need = 0;
    uintptr_t ia = (uintptr_t)b->in, oa = (uintptr_t)b->out;

    if ((unsigned)s->op >= EV_OP_COUNT)
        return ev_err_set(err, EV_EINVAL, "binding: unknown op %d", (int)s->op);
    if (es == 0)
        return ev_err_set(err, EV_EINVAL, "binding: unknown dtype %d", (int)s->dtype);
    if (s->rows < 0)
        return ev_err_set(err, EV_EINVAL, "binding: rows R = %lld is negative", (long long)s->rows);
    if (s->cols <= 0)
        return ev_err_set(err, EV_EINVAL, "binding: cols N = %lld: a row needs at least one element",
                          (long long)s->cols);
    if (s->stride < s->cols)
        return ev_err_set(err, EV_EINVAL, "binding: stride %lld is less than N = %lld", (long long)s->stride,
                          (long long)s->cols);
    if (s->rows > 0) {
        size_t elems;
        if (ev_size_mul((size_t)(s->rows - 1), (size_t)s->stride, &elems) ||
            ev_size_add(elems, (size_t)s->cols, &elems) || ev_size_mul(elems, es, &in_need) ||
            ev_size_mul((size_t)s->rows, es, &out_need))
            return ev_err_set(err, EV_EINVAL, "binding: R = %lld x stride %lld overflows a size",
                              (long long)s->rows, (long long)s->stride);
    }
    if (b->in_span < in_need)
        return ev_err_set(err, EV_EINVAL,
                          "binding: input span %zu bytes is too small for (R-1)*stride+N = %zu bytes",
                          b->in_span, in_need);
    if (b->out_span < out_need)
        return ev_err_set(err, EV_EINVAL, "binding: output span %zu bytes is too small for R = %lld %s",
                          b->out_span, (long long)s->rows, ev_dtype_name(s->dtype));
    if (s->rows > 0 && (b->in == NULL || b->out == NULL))
        return ev_err_set(err, EV_EINVAL, "binding: %s pointer is NULL", b->in == NULL ? "input" : "output");
    if (ia % es != 0)
        return ev_err_set(err, EV_EINVAL, "binding: input %#llx is not aligned to %zu-byte %s elements",
                          (unsigned long long)ia, es, ev_dtype_name(s->dtype));
    if (oa % es != 0)
        return ev_err_set(err, EV_EINVAL, "binding: output %#llx is not aligned to %zu-byte %s elements",
                          (unsigned long long)oa, es, ev_dtype_name(s->dtype));
    if (b->in_span > 0 && b->out_span > 0 && b->in != NULL && b->out != NULL) {
        /* [ia, ia+in_span) and [oa, oa+out_span) intersect; spans may reach the top */
        int apart = (oa >= ia && oa - ia >= b->in_span) || (ia >= oa && ia - oa >= b->out_span);
        if (!apart)
            return ev_err_set(err, EV_EINVAL, "binding: input [%#llx, +%zu) and output [%#llx, +%zu) overlap",
                              (unsigned long long)ia, b->in_span, (unsigned long long)oa, b->out_span);
    }
    b->in_align = ev_binding_align(b->in);
    b->out_align = ev_binding_align(b->out);
    b->in_need = in_need;
    b->out_need = out_need;
    return EV_OK;
}

ev_status ev_binding_make(ev_binding *b, const ev_shape *s, const void *in, size_t in_span, void *out,
                          size_t out_span, ev_err *err)
{
    b->shape = *s;
    b->in = in;
    b->in_span = in_span;
    b->out = out;
    b->out_span = out_span;
    return ev_binding_check(b, err);
}
