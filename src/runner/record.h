/*
 * record.h: the worker's record stream (docs/runner.md, "Worker records").
 * A worker writes one JSON object per line to its record fd; the first
 * member is "type" (hello, skip, binding, validation, cold, flush, node,
 * warmup, calibration, sample, check, device, end).  Doubles are written exactly
 * (ev_json_add_double); the reader accepts any finite decimal, so a python
 * peer writing repr(float) is read to the same bits.
 *
 * Writing belongs to the worker (never the database); reading and the
 * commit into the store belong to the supervisor (supervisor.c).
 */
#ifndef EV_RECORD_H
#define EV_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "status.h"
#include "store/store.h"

/* Record types, in the order a complete job emits them (node, sample and
 * validation repeat; skip replaces everything between hello and end). */
typedef enum ev_rec_type {
    EV_REC_HELLO = 0,
    EV_REC_SKIP,
    EV_REC_BINDING,
    EV_REC_VALIDATION,
    EV_REC_COLD,
    EV_REC_FLUSH,
    EV_REC_NODE,
    EV_REC_WARMUP,
    EV_REC_CALIBRATION,
    EV_REC_SAMPLE,
    EV_REC_CHECK,   /* an output checked after a timed sample (store schema 4: the rotated input, the second
                       set; written by no worker since the plants) */
    EV_REC_OPCHECK, /* after every cold and hot sample: the check tag of its replays (kernels/plants.h) */
    EV_REC_DEVICE,  /* once, after the samples: the device's state and the attempt's facts */
    EV_REC_OPKEPT,  /* once, after the device record: the kept output of one op of the last replay */
    EV_REC_END,
    EV_REC_COUNT
} ev_rec_type;

const char *ev_rec_type_name(ev_rec_type t);

/* The writing end: a file descriptor and the count of records written. */
typedef struct ev_rec_out {
    int fd;
    int64_t count;
} ev_rec_out;

/* Creates an object {"type": name}.  NULL on allocation failure. */
cJSON *ev_rec_new(ev_rec_type t);
/* Writes rec as one line to o->fd (retrying short writes) and counts it;
 * frees rec either way.  EV_EIO when the pipe is gone. */
ev_status ev_rec_write(ev_rec_out *o, cJSON *rec, ev_err *err);
/* Writes raw bytes (a fault arm's garbage line); not counted. */
ev_status ev_rec_write_raw(ev_rec_out *o, const char *line, ev_err *err);

/* Writes line[0..n) (one record, without its newline) and a newline,
 * byte for byte, and counts it: a relayed record (the torch peer's) keeps
 * the exact number text its writer chose.  EV_EIO when the pipe is gone. */
ev_status ev_rec_relay(ev_rec_out *o, const char *line, size_t n, ev_err *err);

/* Parses one line (without its newline).  OUT: *out (a tree the caller
 * deletes) and *type.  EV_EFORMAT with err saying why: not strict JSON,
 * not an object, no or unknown "type". */
ev_status ev_rec_parse(const char *line, size_t n, cJSON **out, ev_rec_type *type, ev_err *err);

/* ---- the data records' codecs: one field list each, for the writer
 * (ev_rec_encode: the worker) and the reader (ev_rec_decode: the
 * supervisor), so the two cannot drift apart.  The torch peer (python)
 * writes the same keys (docs/runner.md, "Worker records"). ---- */

/* The records without a store row type of their own. */
typedef struct ev_rec_cold {
    const char *name;
    int64_t elapsed_ns;
} ev_rec_cold;
typedef struct ev_rec_flush {
    int64_t flush_bytes, cache_bytes;
} ev_rec_flush;
typedef struct ev_rec_warmup {
    double target_ms, elapsed_ms;
    int64_t replays;
} ev_rec_warmup;
typedef struct ev_rec_calib {
    int chosen;
    int64_t step, replays;
    double elapsed_ms, target_ms;
} ev_rec_calib;

/* Any decoded row. */
typedef union ev_rec_row {
    ev_binding_row binding;
    ev_validation_row validation;
    ev_rec_cold cold;
    ev_rec_flush flush;
    ev_node_row node;
    ev_rec_warmup warmup;
    ev_rec_calib calib;
    ev_sample_row sample;
    ev_sample_check_row check;
    ev_op_check_row opcheck;
    ev_op_kept_row opkept;
} ev_rec_row;

/* Encodes a data record (binding, validation, cold, flush, node, warmup,
 * calibration, sample, check, opcheck, opkept) from its row (the ev_rec_row member of its type):
 * {"type": ..., then the fields in codec order, the order the worker
 * always wrote them in}; a sample's sm_clock_mhz
 * of -1 is written as null.  NULL when out of memory or t has no codec
 * (hello, skip, device and end are written by hand). */
cJSON *ev_rec_encode(ev_rec_type t, const ev_rec_row *row);
/* Decodes record r of type t into *row (zeroed first), the fields in
 * codec order: the first missing or mistyped one is the error (-1, e says
 * which; a bool that is not true or false: "<key>: must be true or
 * false"); an absent or null sm_clock_mhz is -1.  0 when t has no codec. */
int ev_rec_decode(ev_rec_type t, const cJSON *r, ev_rec_row *row, ev_err *e);

#endif
