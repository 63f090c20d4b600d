/*
 * vocab.h: evident's vocabulary, every word of it defined here once: the
 * ops, the storage dtypes, the case roles, the job phases, the native
 * schedules and the arm kinds.  Each list is an X-macro: EV_OPS(X, a)
 * expands X(<row>, a) once per word, in the order below, which is the
 * order of the enum, of every table made from the list and of every
 * listing a reader sees (error messages, the report's columns).
 *
 * Everything else spells a word through these lists: the enums and the
 * name/parse functions below (vocab.c), the protocol parser, the plan, the
 * store's writer, the verifier's readers, the model's CSV, the bench
 * tools, the kernels' entry points (kernels/reduce*.cu*: one entry per op
 * x dtype x schedule, made from EV_OPS and EV_DTYPES), the oracle and the
 * peers' dispatch, and kernels/peer_torch.py, which reads the rows of
 * EV_OPS and EV_DTYPES from this file (keep one row a line, as they are).
 * Adding an op, a dtype or an arm kind: docs/HACKING.md.
 */
#ifndef EV_VOCAB_H
#define EV_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* clang-format off */

/*
 * Ops: X(ID, name, COMBINE, FINISH, a).  name is an identifier (the kernels'
 * entry symbols are name_dtype_schedule).  COMBINE is how a row's elements
 * are combined (ev_combine), FINISH what is done to the combined FP32 value
 * before it is stored (ev_finish).  The oracle's check follows from the
 * two (kernels/oracle.h).
 */
#define EV_OPS(X, a) \
    X(SUM, reduce_sum, SUM, NONE, a) \
    X(MAX, reduce_max, MAX, NONE, a) \
    X(MIN, reduce_min, MIN, NONE, a) \
    X(MEAN, reduce_mean, SUM, MEAN, a)

/* Storage dtypes: X(ID, name, bytes, a).  Arithmetic is FP32 whatever
 * the storage (kernels/dtype.h). */
#define EV_DTYPES(X, a) \
    X(FP32, fp32, 4, a) \
    X(FP16, fp16, 2, a) \
    X(BF16, bf16, 2, a)

/* Case roles: X(ID, "name", a).  A case whose protocol names none is a
 * calibration case. */
#define EV_ROLES(X, a) \
    X(CALIBRATION, "calibration", a) \
    X(HOLDOUT, "holdout", a)

/* Job phases: X(ID, "name", a), in the order a run executes them. */
#define EV_PHASES(X, a) \
    X(MAIN, "main", a) \
    X(POLICY, "policy", a) \
    X(RESCUE, "rescue", a) \
    X(RECHECK, "recheck", a)

/* Native schedules (the native arms' names): X(ID, "name", rows, a).
 * rows: the fixed rows per program; 0 where the case's default rows B
 * (default) or the row's length (short, split) decide it. */
#define EV_SCHEDS(X, a) \
    X(DEFAULT, "default", 0, a) \
    X(ROWS1, "rows1", 1, a) \
    X(ROWS2, "rows2", 2, a) \
    X(ROWS4, "rows4", 4, a) \
    X(SHORT, "short", 0, a) \
    X(SPLIT, "split", 0, a)

/*
 * Arm kinds: X(ID, "name", "prefix", PEER, a).  name: the one arm of the
 * kind (NULL: the kind has many); prefix: the names a protocol declares
 * for the kind; PEER 1 for another implementation measured beside ours.
 * Native arms are named by their schedule (EV_SCHEDS).
 */
#define EV_ARM_KINDS(X, a) \
    X(NATIVE, NULL, NULL, 0, a) \
    X(AUTO, "auto", NULL, 0, a) \
    X(FLOOR, "floor", NULL, 0, a) \
    X(CEILING, "ceiling", NULL, 0, a) \
    X(CEILING_L2, "ceiling-l2", NULL, 0, a) \
    X(CUB, "cub", NULL, 1, a) \
    X(TORCH, "torch-compile", NULL, 1, a) \
    X(FAULT, NULL, "fault-", 0, a) \
    X(EXTERNAL, NULL, "ext-", 1, a)

/* X(OP, op_name, DT, dt_name) for every op x dtype, ops outer, in the
 * lists' order: the kernels' entry points and their tables. */
#define EV_OPS_BY_DTYPES(X) EV_OPS(EV_OBD_OP_, X)
#define EV_OBD_OP_(id, name, comb, fin, X) EV_DTYPES(EV_OBD_DT_, (X, id, name))
#define EV_OBD_DT_(dt, dtn, bytes, t) EV_OBD_CALL_(EV_OBD_UNPACK_ t, dt, dtn)
#define EV_OBD_UNPACK_(X, id, name) X, id, name
#define EV_OBD_CALL_(...) EV_OBD_CALL2_(__VA_ARGS__)
#define EV_OBD_CALL2_(X, id, name, dt, dtn) X(id, name, dt, dtn)

/* X(OP, op_name, DT, dt_name) for every op of the one dtype DT (its id
 * and name, as EV_DTYPES lists them): a unit of one dtype's entries. */
#define EV_OPS_OF_DTYPE(X, DT, dtn) EV_OPS(EV_OOD_OP_, (X, DT, dtn))
#define EV_OOD_OP_(id, name, comb, fin, t) EV_OOD_CALL_(EV_OOD_UNPACK_ t, id, name)
#define EV_OOD_UNPACK_(X, dt, dtn) X, dt, dtn
#define EV_OOD_CALL_(...) EV_OOD_CALL2_(__VA_ARGS__)
#define EV_OOD_CALL2_(X, dt, dtn, id, name) X(id, name, dt, dtn)

/* clang-format on */

/* How an op combines a row's elements: SUM in FP32 in the documented order
 * (kernels/reduce_cpu.h); MAX and MIN exactly, over the total order of the
 * values in which -0 lies below +0 (NaN anywhere in the row gives NaN). */
typedef enum ev_combine { EV_COMBINE_SUM = 0, EV_COMBINE_MAX, EV_COMBINE_MIN } ev_combine;
/* What an op does to the combined FP32 value before the store: nothing,
 * or MEAN: divide it by the row's N, one IEEE FP32 division (N converted
 * to FP32 with RNE). */
typedef enum ev_finish { EV_FINISH_NONE = 0, EV_FINISH_MEAN } ev_finish;

#define EV_OP_ENUM_(id, name, combine, fin, a)  EV_OP_##id,
#define EV_DTYPE_ENUM_(id, name, bytes, a)      EV_DTYPE_##id,
#define EV_ROLE_ENUM_(id, name, a)              EV_ROLE_##id,
#define EV_PHASE_ENUM_(id, name, a)             EV_PHASE_##id,
#define EV_SCHED_ENUM_(id, name, rows, a)       EV_SCHED_##id,
#define EV_ARM_ENUM_(id, name, prefix, peer, a) EV_ARM_##id,

typedef enum ev_op { EV_OPS(EV_OP_ENUM_, _) EV_OP_COUNT } ev_op;
typedef enum ev_dtype { EV_DTYPES(EV_DTYPE_ENUM_, _) EV_DTYPE_COUNT } ev_dtype;
typedef enum ev_role { EV_ROLES(EV_ROLE_ENUM_, _) EV_ROLE_COUNT } ev_role;
typedef enum ev_phase { EV_PHASES(EV_PHASE_ENUM_, _) EV_PHASE_COUNT } ev_phase;
typedef enum ev_sched { EV_SCHEDS(EV_SCHED_ENUM_, _) EV_SCHED_COUNT } ev_sched;
typedef enum ev_arm_kind { EV_ARM_KINDS(EV_ARM_ENUM_, _) EV_ARM_KIND_COUNT } ev_arm_kind;

/* The longest name of each list, with its NUL, for the fixed-size fields
 * that hold one (a case's op, dtype and role). */
#define EV_OP_NAME_MAX    16
#define EV_DTYPE_NAME_MAX 8
#define EV_ROLE_NAME_MAX  16

/* Names: the word's name, "?" when the value is out of range (arm kinds:
 * NULL for a kind without one arm).  Parsers: 0 and *out set when name
 * is a word of the list (NULL is none), else -1 and *out untouched. */
const char *ev_op_name(ev_op op);
int ev_op_parse(const char *name, ev_op *out);
const char *ev_dtype_name(ev_dtype d);
int ev_dtype_parse(const char *name, ev_dtype *out);
const char *ev_role_name(ev_role r);
int ev_role_parse(const char *name, ev_role *out);
const char *ev_phase_name(ev_phase p);
int ev_phase_parse(const char *name, ev_phase *out);
const char *ev_sched_name(ev_sched s);
int ev_sched_parse(const char *name, ev_sched *out);
const char *ev_arm_kind_name(ev_arm_kind k);

/* 1 when name is the word (NULL is no word): the one comparison of a
 * stored or parsed name with a word of the vocabulary. */
int ev_is_op(const char *name, ev_op op);
int ev_is_dtype(const char *name, ev_dtype d);
int ev_is_role(const char *name, ev_role r);
int ev_is_phase(const char *name, ev_phase p);
int ev_is_sched(const char *name, ev_sched s);
/* 1 when arm is the one arm of kind k (auto, floor, ceiling, cub,
 * torch-compile); 0 for kinds without one. */
int ev_is_arm(const char *arm, ev_arm_kind k);

/* An op's combine and finish; an out-of-range op gives SUM and NONE. */
ev_combine ev_op_combine(ev_op op);
ev_finish ev_op_finish(ev_op op);
/* Bytes per element of a dtype; 0 when d is out of range. */
size_t ev_dtype_size(ev_dtype d);
/* The fixed rows per program of a schedule (EV_SCHEDS); 0 for the others
 * and out of range. */
int64_t ev_sched_fixed_rows(ev_sched s);
/* The arm name's prefix that declares a kind ("fault-", "ext-"); NULL
 * where a kind has none. */
const char *ev_arm_kind_prefix(ev_arm_kind k);
/* 1 for a peer's kind (another implementation measured beside ours). */
int ev_arm_kind_peer(ev_arm_kind k);

/*
 * The built-in meaning of an arm name: a schedule's name gives NATIVE and
 * *sched; the one arm of a kind gives that kind; a name that begins with a
 * kind's prefix gives that kind (the protocol says whether it declares
 * such an arm: runner/protocol.h, ev_arm_classify).  *sched is
 * EV_SCHED_COUNT for every non-native arm.  Returns 0, or -1 for any other
 * name (outputs untouched).
 */
int ev_arm_builtin(const char *arm, ev_arm_kind *kind, ev_sched *sched);

/* The words of a list for a message, comma-separated ("reduce_sum,
 * reduce_max"): static strings. */
const char *ev_op_words(void);
const char *ev_dtype_words(void);
const char *ev_role_words(void);
const char *ev_phase_words(void);
const char *ev_sched_words(void);

#ifdef __cplusplus
}
#endif

#endif
