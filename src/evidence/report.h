/*
 * report.h: report.html (and the docs' markdown case table) generated from
 * a bundle's other members, and from nothing else.
 *
 * The exporter calls ev_report_html on the members it has just built; the
 * verifier (and `evident report`) call it on the members read back from
 * the archive; the bytes must agree, so the output depends only on the
 * member bytes: no clock, no locale (numbers are formatted with the C
 * library's correctly rounded "%.*f"/"%.17g" in the "C" locale that
 * evident never changes), no host data, and no script or fetched resource.
 */
#ifndef EV_REPORT_H
#define EV_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "status.h"
#include "member.h"

/*
 * Appends report.html to out from members m[0..n) (any order; report.html
 * and receipts.json are ignored if present).  Reads validation.json
 * (required), model.json and provenance.json (shown when present).
 * EV_EFORMAT with err naming the member when a member read is not strict
 * JSON or lacks a key the report needs; out is left as it was on failure.
 */
ev_status ev_report_html(const ev_member *m, size_t n, ev_buf *out, ev_err *err);

/*
 * ev_report_html with, when problem is non-NULL, a red notice at the top
 * saying the bundle does not verify and why (problem: one line, e.g.
 * verify-bundle's first failure).  `evident report` passes what its own
 * verification found; the exporter and the verifier pass NULL, so an
 * intact bundle's page is the same bytes either way.
 */
ev_status ev_report_html_flagged(const ev_member *m, size_t n, const char *problem, ev_buf *out, ev_err *err);

/*
 * ev_report_html from the members' trees, already parsed by the caller
 * (validation.json required, model.json and provenance.json or NULL) and
 * the raw members m[0..n) (the protocol and the proof receipts, which the
 * detection and defences sections read): the verifier's, which parses
 * each member once.  The trees are read, never
 * changed or freed.  Errors as ev_report_html.
 */
struct cJSON;
ev_status ev_report_html_trees(struct cJSON *val, struct cJSON *model, struct cJSON *prov, const ev_member *m,
                               size_t n, ev_buf *out, ev_err *err);

/*
 * Appends the markdown results document to out, from the same members: a
 * header (run, protocol, status, the floor median, the ceiling median and
 * its bytes per second), the case table (one row per case: hot medians of
 * every arm and the recheck, the model's selections, the best peer, auto /
 * best peer and auto / floor), and a closing line counting auto's wins and
 * losses against the best peer with their geometric mean.
 */
ev_status ev_report_markdown(const ev_member *m, size_t n, ev_buf *out, ev_err *err);

/*
 * Appends the failed jobs of a run, one line each, for a terminal
 * (`evident run`'s summary): "  JOB_KEY: OUTCOME: REASON", the reason the
 * report gives (a failed validation's stage, first bad row, value,
 * expected value, error and bound; a compile failure's first error lines;
 * a missing entry with the entries the binary has; ...), for every job
 * whose outcome is a failure (skips are listed apart), in plan order, at
 * most max lines and then how many more there are.  Nothing when none
 * failed.  Errors as ev_report_html.
 */
ev_status ev_report_failures(const ev_member *m, size_t n, size_t max, ev_buf *out, ev_err *err);

/*
 * Appends the results as data (docs/results.md): one row per case and arm
 * that has a main or policy job (median or estimate over rounds, its 95%
 * interval and basis, bytes per op, GB/s, the percentage of the same run's
 * ceiling, outcome and reason), as JSON ("format": EV_RESULTS_FORMAT, the
 * run, its root digest when receipts.json is among the members) or, with
 * csv, as CSV whose first column names the format on every row.  Errors
 * as ev_report_html.
 */
#define EV_RESULTS_FORMAT "evident-results/1"
ev_status ev_results_write(const ev_member *m, size_t n, int csv, ev_buf *out, ev_err *err);

#endif
