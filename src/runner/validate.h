/*
 * validate.h: validation under a protocol, one owner for the job that
 * validates its output (the worker, the torch peer), the runner that
 * refuses a case before its run, and verify-bundle, which validates every
 * stored output again from the regenerated input.
 *
 *  - a case's shape (ev_case_shape) and the oracle's rows of its input,
 *    generated row by row from the protocol's seed (ev_case_oracle_rows:
 *    no span in memory, so the verifier can afford every case);
 *  - an output against those rows (ev_output_check): the FP64 oracle's
 *    verdict (kernels/oracle.h) with the protocol's tolerances, the SUM
 *    bound of tolerances.sum_depth, widened by sum_bound_factor above 1;
 *  - the checkable-case rule (ev_case_checkable): a case whose validation
 *    would pass an output of all-zero bytes, or of either output poison,
 *    cannot tell a kernel that does no work from one that does, and is
 *    refused as a case; so is one whose planted checks would let an
 *    output that omits 1/16 of each row's elements pass a hot sample with
 *    a chance above EV_DETECT_MISS, or whose bound is too wide for a plant
 *    to move a row's output by twice it (ev_case_detection: docs/runner.md,
 *    "Checkable cases").
 */
#ifndef EV_VALIDATE_H
#define EV_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "oracle.h"
#include "protocol.h"
#include "status.h"

/* The shape of case c (its op, dtype, rows, cols and stride).  EV_EINVAL
 * for an op or dtype the kernels do not know. */
ev_status ev_case_shape(const ev_proto_case *c, ev_shape *s, ev_err *err);

/* Validates R outputs against the FP64 oracle (kernels/oracle.h), the SUM
 * bound of the protocol's sum_depth, widened by its sum_bound_factor when
 * that is above 1; rows: the oracle's rows of in (ev_oracle_rows, or
 * ev_case_oracle_rows), or NULL to compute them from in.  OUT: *v (a
 * shape the oracle refuses counts every row as a mismatch). */
void ev_output_check(const ev_protocol *p, const ev_shape *s, const void *in, const ev_oracle_row *rows,
                     const void *out, ev_validation *v);

/* The oracle's rows of case ci's input (kernels/inputs.h: the protocol's
 * seed, case key ci), generated one row at a time.  OUT: *s, *rows
 * (malloc'd, R of them; at least one element).  EV_EINVAL for a case
 * not in p, EV_ENOMEM. */
ev_status ev_case_oracle_rows(const ev_protocol *p, size_t ci, ev_shape *s, ev_oracle_row **rows,
                              ev_err *err);

/*
 * Why an output failed its validation, in words (the reason a report, a
 * run's summary and verify-bundle's readers show: one wording).  A
 * reduction writes one value per row, so a row names the place (an op
 * whose output had columns would name the column too).
 *
 * ev_validation_explain: from the output itself, out[0..len) (R elements
 * of s's dtype) against rows (ev_case_oracle_rows) under p's tolerances:
 * "<stage> stage: M of R rows wrong; the first, row r, is V where E is
 * expected (error X, bound B)" ("(error X; reduce_max is bit-exact)" for
 * MAX and MIN), "nan" for a NaN.  An output whose length is not R elements, or that passes,
 * says so.  OUT: t[cap] (returns t).
 *
 * ev_validation_numbers: from a validation record's numbers alone (the
 * final stage keeps no output of its own) for a case of op (a name; NULL:
 * unknown): "<stage> stage: M of R rows wrong (largest finite error X,
 * bound B)", "(...; reduce_max is bit-exact)".  OUT: t[cap] (returns t).
 */
const char *ev_validation_explain(const ev_protocol *p, const ev_shape *s, const ev_oracle_row *rows,
                                  const void *out, size_t len, const char *stage, char *t, size_t cap);
const char *ev_validation_numbers(const char *stage, const char *op, int64_t mismatches, int64_t rows,
                                  double max_abs_err, double bound, char *t, size_t cap);

/* The outputs no case may pass, in the order they are tried. */
#define EV_BLIND_PATTERNS 3
/* Pattern k's byte (0x00, EV_POISON_OUT_BYTE, EV_POISON_OUT_BYTE2) and
 * its words ("an all-zero output", ...). */
unsigned char ev_blind_byte(int k);
const char *ev_blind_name(int k);

/* The most a hot sample of an output that omits 1/16 of each row's
 * elements may pass the planted checks with (the omission rule). */
#define EV_DETECT_MISS 0.001

/*
 * What the planted checks (kernels/plants.h) catch of case ci under
 * protocol p, computed before any input is seen (docs/runner.md,
 * "Checkable cases"): an output that leaves out `n` of each row's N
 * elements, at positions fixed before the attempt's secret seed is drawn,
 * passes one op's check with a chance of at most (1 - c n/N)^m (m rows
 * planted per op, c = 1/2 for reduce_sum: a plant among the omitted
 * elements moves the row's expected output by more than twice its bound,
 * away from the omitted sum with a chance of 1/2 at least; c = 1 for
 * reduce_max: the plant is the row's new maximum), and a hot sample (at
 * least one replay of ops_per_graph ops, each planted independently)
 * with that to the power ops_per_graph.
 */
typedef struct ev_detection {
    int64_t rows_planted; /* m */
    int64_t omit;         /* the fewest elements per row whose omission a hot sample catches with a chance of
                             at least 1 - EV_DETECT_MISS (N + 1: none) */
    double resolution;    /* omit / N: the case's detection resolution */
    double miss_hot;  /* the chance bound for 1/16 of each row omitted (at least one element), a hot sample */
    double miss_cold; /* the same for a cold sample (one op) */
    double slack;     /* sum_bound_factor x the SUM bound's slack of a row (0 for MAX): plants need it
                         below EV_PLANT_SLACK */
    int data;         /* 1: refined with the case's own input */
} ev_detection;
/* The largest factor x slack a case's plants can be made under (a plant
 * must move a row's output past twice a bound that grows with it: with
 * up to EV_PLANT_SITES = 4 sites of at most 128 2^e in a row, each at
 * least 64 2^e, that holds for a slack below 1/16, and 0.05 leaves room). */
#define EV_PLANT_SLACK 0.05
ev_status ev_case_detection(const ev_protocol *p, size_t ci, ev_detection *d, ev_err *err);

/* The rules of ev_case_checkable (a verifier holds a bundle to those its
 * store schema had: blind from schema 4, omission from schema 5). */
#define EV_CHECKABLE_BLIND    1
#define EV_CHECKABLE_OMISSION 2
#define EV_CHECKABLE_ALL      (EV_CHECKABLE_BLIND | EV_CHECKABLE_OMISSION)

/*
 * The checkable-case rule, for the rules in `rules`: case ci (R >= 1) is
 * refused (blind) when an output whose every byte is one of the blind
 * patterns passes ev_output_check; the input is generated row by row and
 * the check stops at the first row that refuses every pattern, so a
 * checkable case costs about one row.  It is refused (omission) when
 * ev_case_detection's miss_hot is above EV_DETECT_MISS, or its slack is
 * at or above EV_PLANT_SLACK.  EV_OK (R = 0 is exempt: it launches
 * nothing); EV_EFORMAT with the case, what passes, the numbers and what
 * to do; EV_ENOMEM.
 */
ev_status ev_case_checkable(const ev_protocol *p, size_t ci, int rules, ev_err *err);

#endif
