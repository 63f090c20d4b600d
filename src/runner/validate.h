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
 *  - the checkable-case rule (issue 16, ev_case_checkable): a case whose
 *    validation would pass an output of all-zero bytes, or of either
 *    output poison, cannot tell a kernel that does no work from one that
 *    does, and is refused as a case.
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

/* The outputs no case may pass, in the order they are tried. */
#define EV_BLIND_PATTERNS 3
/* Pattern k's byte (0x00, EV_POISON_OUT_BYTE, EV_POISON_OUT_BYTE2) and
 * its words ("an all-zero output", ...). */
unsigned char ev_blind_byte(int k);
const char *ev_blind_name(int k);

/*
 * The checkable-case rule: case ci (R >= 1) is refused when an output
 * whose every byte is one of the blind patterns passes ev_output_check.
 * The input is generated row by row and the check stops at the first row
 * that refuses every pattern, so a checkable case costs about one row.
 * EV_OK (R = 0 is exempt: it launches nothing); EV_EFORMAT with the case,
 * the pattern, row 0's sum and bound and what to do; EV_ENOMEM.
 */
ev_status ev_case_checkable(const ev_protocol *p, size_t ci, ev_err *err);

#endif
