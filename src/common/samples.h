/*
 * samples.h: samples.csv's columns and the per-op time, one definition for
 * the exporter (which writes them), the verifier (which reads and
 * recomputes them) and the store's fit loader (which computes per_op_us
 * from the store's rows).  docs/bundle-format.md, "samples.csv".
 */
#ifndef EV_SAMPLES_H
#define EV_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"

/* The columns of samples.csv, in order (its header line). */
extern const char *const ev_samples_columns[];
extern const size_t ev_samples_ncols;

/* Appends the header line (the columns, comma-separated, then "\n"). */
ev_status ev_samples_header(ev_buf *out);

/* per_op_us = elapsed_ms * 1000.0 / (double)(replays * ops_per_graph).
 * EV_ERANGE when replays or ops_per_graph is < 1 or their product exceeds
 * 2^53 (*out untouched). */
ev_status ev_per_op_us(double elapsed_ms, int64_t replays, int64_t ops_per_graph, double *out);

#endif
