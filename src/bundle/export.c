/*
 * export.c: builds delivery.zip's members from the store.
 *
 * Three stages: load (every named query of the run into plain arrays; no
 * SQL here), derive (outcomes via ev_outcome_derive, per-op times, medians
 * via ev_median, drift, the model refit via ev_model_fit), and write (each
 * member into an ev_buf, exactly as docs/bundle-format.md says; then
 * report.html from the other members, then receipts.json over all of them).
 * Nothing here depends on the clock, the locale, the time zone or the host.
 * This file packages the members and holds the public entry points; the
 * stages live beside it (export_int.h lists the files in reading order).
 */
#include "bundle/export.h"

#include "export_int.h"
#include "runner/fault_rules.h"
#include "runner/sample_rules.h"
#include "evidence/receipts.h"
#include "member.h"

/* ---- packaging ----------------------------------------------------------- */

/* Appends a member (name copied, data taken over: freed with the bundle;
 * on failure data is freed too). */
static ev_status bundle_add(ev_bundle_t *B, const char *name, void *data, size_t len)
{
    if (B->n == B->cap) {
        size_t cap = B->cap ? B->cap * 2 : 32;
        ev_member *m = realloc(B->m, cap * sizeof *m);
        if (m)
            B->m = m;
        char **nm = m ? realloc(B->names, cap * sizeof *nm) : NULL;
        if (nm)
            B->names = nm;
        void **d = nm ? realloc(B->datas, cap * sizeof *d) : NULL;
        if (!d) {
            free(data);
            return EV_ENOMEM;
        }
        B->datas = d;
        B->cap = cap;
    }
    size_t nl = strlen(name);
    char *nc = malloc(nl + 1);
    if (!nc) {
        free(data);
        return EV_ENOMEM;
    }
    memcpy(nc, name, nl + 1);
    B->names[B->n] = nc;
    B->datas[B->n] = data;
    B->m[B->n].name = nc;
    B->m[B->n].data = data;
    B->m[B->n].len = len;
    B->n++;
    return EV_OK;
}

/* Adds the contents of buf as a member (buf emptied). */
static ev_status bundle_add_buf(ev_bundle_t *B, const char *name, ev_buf *buf)
{
    size_t len = 0;
    char *p = ev_buf_steal(buf, &len);
    if (!p) {
        p = malloc(1);
        if (!p)
            return EV_ENOMEM;
        len = 0;
    }
    return bundle_add(B, name, p, len);
}

/* Adds a copy of bytes p[0..n) as a member. */
static ev_status bundle_add_copy(ev_bundle_t *B, const char *name, const void *p, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (!d)
        return EV_ENOMEM;
    if (n)
        memcpy(d, p, n);
    return bundle_add(B, name, d, n);
}

/* The output member name of a validation row ("outputs/<job>-<attempt>.bin"). */
/* ---- receipts and the bundle -------------------------------------------------- */

/* qsort comparator: members by name, bytewise. */
static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const ev_member *)a)->name, ((const ev_member *)b)->name);
}

/* Sorts B's members by name, keeping names/datas parallel. */
static ev_status bundle_sort(ev_bundle_t *B)
{
    /* names[i] and datas[i] are the members' ex_own pointers: rebuild them from
     * the sorted members (name is names[i]; data is datas[i] or a copy). */
    qsort(B->m, B->n, sizeof *B->m, cmp_member);
    for (size_t i = 0; i < B->n; i++) {
        B->names[i] = (char *)B->m[i].name;
        B->datas[i] = (void *)B->m[i].data;
    }
    return EV_OK;
}

/* Writes receipts.json over B's members into out. */
static ev_status write_receipts(const ev_bundle_t *B, ev_buf *out)
{
    ev_receipt *r = calloc(B->n ? B->n : 1, sizeof *r);
    char(*hex)[EV_SHA256_HEX_LEN + 1] = calloc(B->n ? B->n : 1, sizeof *hex);
    ev_status rc = r && hex ? EV_OK : EV_ENOMEM;
    for (size_t i = 0; i < B->n && !rc; i++) {
        rc = ev_sha256_hex(B->m[i].data ? B->m[i].data : "", B->m[i].len, hex[i]);
        r[i].name = B->m[i].name;
        r[i].size = (int64_t)B->m[i].len;
        r[i].sha256_hex = hex[i];
    }
    if (!rc)
        rc = ev_receipts_json(EV_BUNDLE_FORMAT, r, B->n, out);
    free(r);
    free(hex);
    return rc;
}

/* Builds every member of run_id into B. */
static ev_status build_members(const xload *L, ev_bundle_t *B, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_buf buf = EV_BUF_INIT, model = EV_BUF_INIT;
    ex_view xv = {0};
    const char **paths = NULL, **shas = NULL;
    char tree[EV_SHA256_HEX_LEN + 1];
    char name[600];

    if ((rc = bundle_add_copy(B, EV_MEMBER_PROTOCOL, L->run.protocol, L->run.protocol_len)))
        goto oom;
    if ((rc = ex_write_samples_csv(L, &buf)) || (rc = bundle_add_buf(B, EV_MEMBER_SAMPLES, &buf)))
        goto oom;
    if ((rc = ex_view_build(L, &xv, err)) || (rc = ex_write_model(&xv, &model, err)))
        goto out;
    if ((rc = ex_write_validation(L, &xv, &model, &buf, err)) ||
        (rc = bundle_add_buf(B, EV_MEMBER_VALIDATION, &buf)))
        goto oom;
    if ((rc = bundle_add_buf(B, EV_MEMBER_MODEL, &model)))
        goto oom;
    ex_view_free(&xv); /* what follows does not read it */

    if (L->sources.n) {
        paths = calloc(L->sources.n, sizeof *paths);
        shas = calloc(L->sources.n, sizeof *shas);
        if (!paths || !shas)
            goto oom;
    }
    for (size_t i = 0; i < L->sources.n; i++) {
        const xsource *x = ex_vec_at(&L->sources, i);
        paths[i] = x->path;
        shas[i] = x->sha256;
        if (i && strcmp(paths[i - 1], paths[i]) >= 0) {
            rc = ev_err_set(err, EV_EDB, "export: snapshot rows out of order at %s", x->path);
            goto out;
        }
        if ((size_t)snprintf(name, sizeof name, EV_MEMBER_SOURCES "%s", x->path) >= sizeof name ||
            !ev_member_name_ok(name)) {
            rc = ev_err_set(err, EV_EFORMAT, "export: snapshot path not allowed as a member name: '%s'",
                            x->path);
            goto out;
        }
        if ((rc = bundle_add_copy(B, name, x->bytes, x->len)))
            goto oom;
    }
    if ((rc = ev_bundle_tree_hash(paths, shas, L->sources.n, tree)))
        goto oom;
    if ((rc = ex_write_proof(L, tree, &buf)) || (rc = bundle_add_buf(B, EV_MEMBER_PROOF, &buf)))
        goto oom;
    if ((rc = ex_write_provenance(L, tree, &buf)) || (rc = bundle_add_buf(B, EV_MEMBER_PROVENANCE, &buf)))
        goto oom;

    for (size_t i = 0; i < L->vals.n; i++) {
        const xval *v = ex_vec_at(&L->vals, i);
        if (!v->has_output || strcmp(v->stage, "first"))
            continue;
        ex_output_name(v, name, sizeof name);
        if ((rc = bundle_add_copy(B, name, v->output, v->output_len)))
            goto oom;
    }
    for (size_t i = 0; i < L->checks.n; i++) {
        const xcheck *c = ex_vec_at(&L->checks, i);
        if (!c->r.has_output)
            continue;
        ex_check_name(c, name, sizeof name);
        if ((rc = bundle_add_copy(B, name, c->r.output, c->r.output_len)))
            goto oom;
    }
    for (size_t i = 0; i < L->opkept.n; i++) {
        const xopkept *k = ex_vec_at(&L->opkept, i);
        ex_kept_name(k, name, sizeof name);
        if ((rc = bundle_add_copy(B, name, k->r.output, k->r.output_len)))
            goto oom;
    }

    bundle_sort(B);
    if ((rc = ev_report_html(B->m, B->n, &buf, err)))
        goto out;
    if ((rc = bundle_add_buf(B, EV_MEMBER_REPORT, &buf)))
        goto oom;
    bundle_sort(B);
    if ((rc = write_receipts(B, &buf)) || (rc = ev_sha256_hex(buf.data, buf.len, B->root)) ||
        (rc = bundle_add_buf(B, EV_MEMBER_RECEIPTS, &buf)))
        goto oom;
    bundle_sort(B);
    goto out;
oom:
    if (rc == EV_ENOMEM || !rc) {
        rc = EV_ENOMEM;
        ev_err_set(err, rc, "export: out of memory building the members");
    } else {
        ev_err_set(err, rc, "export: building the members failed: %s", ev_strerror(rc));
    }
out:
    ex_view_free(&xv);
    free(paths);
    free(shas);
    ev_buf_free(&buf);
    ev_buf_free(&model);
    return rc;
}

/* ---- public --------------------------------------------------------------- */

/* Frees a bundle; NULL-safe. */
void ev_bundle_free(ev_bundle *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->names[i]);
        free(b->datas[i]);
    }
    free(b->names);
    free(b->datas);
    free(b->m);
    free(b);
}

const ev_member *ev_bundle_members(const ev_bundle *b, size_t *n)
{
    *n = b->n;
    return b->m;
}

const char *ev_bundle_root(const ev_bundle *b)
{
    return b->root;
}

int64_t ev_bundle_run_id(const ev_bundle *b)
{
    return b->run_id;
}

/* Builds the bundle; see export.h. */
/*
 * Holds the store's rows to the invariants of store/outcome.h before any
 * member is written (the exporter is their first reader): a validation
 * whose verdict does not follow from its numbers, an environment whose
 * profile id is not the hash of its record, a finished run with a job
 * never attempted or whose last attempt is interrupted.  Returns EV_OK, or
 * EV_EFORMAT with err naming the row and the rule (nothing is exported).
 */
/* The rows attempt id holds in L, as ev_attempt_rows counts them in a
 * bundle: binding, warm-up, calibrations, flush, cold timings but the
 * supervisor's own (ev_rule_cold_is_supervisors), validations, sample
 * checks, graph nodes, device record, samples. */
static int64_t attempt_rows(const xload *L, int64_t id)
{
    const vec *kinds[] = {&L->bindings, &L->warmups, &L->cals,    &L->flushes, &L->colds,    &L->vals,
                          &L->checks,   &L->nodes,   &L->devices, &L->samples, &L->opchecks, &L->opkept};
    int64_t rows = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t lo, hi;
        ex_attempt_range(kinds[i], id, &lo, &hi);
        rows += (int64_t)(hi - lo);
        for (size_t c = lo; kinds[i] == &L->colds && c < hi; c++)
            rows -= ev_rule_cold_is_supervisors(((const xcold *)ex_vec_at(&L->colds, c))->name);
    }
    return rows;
}

/* check_invariants' rows: L held to each rule, proto (or NULL) for the
 * fault arms, fault_why[cap] scratch for their rule's words. */
static ev_status check_rows(const xload *L, const ev_protocol *proto, char *fault_why, size_t cap,
                            ev_err *err)
{
    for (size_t i = 0; i < L->vals.n; i++) {
        const xval *v = ex_vec_at(&L->vals, i);
        const char *first = NULL, *why;
        /* rows are sorted by (attempt, stage): the attempt's are adjacent */
        for (size_t k = i > 0 ? i - 1 : 0; k < L->vals.n && k <= i + 1; k++) {
            const xval *w = ex_vec_at(&L->vals, k);
            if (w->attempt_id == v->attempt_id && !strcmp(w->stage, "first"))
                first = w->sha256;
        }
        why = ev_validation_problem(!strcmp(v->stage, "final"), v->passed, v->mismatches, v->sha256, first);
        if (why)
            return ev_err_set(err, EV_EFORMAT,
                              "export: the store breaks an invariant: the %s validation of attempt %" PRId64
                              " is %s; refusing to export it",
                              v->stage, v->attempt_id, why);
    }
    for (size_t i = 0; i < L->invs.n; i++) {
        const xinv *x = ex_vec_at(&L->invs, i);
        if (x->profile_id &&
            !ev_profile_id_matches(x->env_json, x->env_json ? strlen(x->env_json) : 0, x->profile_id))
            return ev_err_set(err, EV_EFORMAT,
                              "export: the store breaks an invariant: invocation %" PRId64
                              "'s profile id is not the SHA-256 of its environment record; refusing to "
                              "export it",
                              x->invocation_id);
    }
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = ex_vec_at(&L->jobs, i);
        if (j->has_retry != ev_is_phase(j->phase, EV_PHASE_RESCUE))
            return ev_err_set(err, EV_EFORMAT,
                              "export: the store breaks an invariant: job %s is in phase %s %s; refusing to "
                              "export it",
                              j->job_key, j->phase,
                              j->has_retry ? "yet retries another job" : "yet retries no job");
        for (size_t k = 0; k < j->n_att; k++) {
            const xattempt *a = ex_vec_at(&L->atts, j->att0 + k);
            size_t lo, hi;
            ex_attempt_range(&L->vals, a->attempt_id, &lo, &hi);
            const char *why = ev_stages_problem(a->outcome, j->has_case, (int)(hi - lo));
            ex_attempt_range(&L->checks, a->attempt_id, &lo, &hi);
            for (size_t c = lo; c < hi && !why; c++)
                why = ev_check_problem(a->outcome, ((const xcheck *)ex_vec_at(&L->checks, c))->r.passed);
            ex_attempt_range(&L->opchecks, a->attempt_id, &lo, &hi);
            for (size_t c = lo; c < hi && !why; c++)
                why = ev_check_problem(a->outcome, ((const xopcheck *)ex_vec_at(&L->opchecks, c))->r.passed);
            ex_attempt_range(&L->opkept, a->attempt_id, &lo, &hi);
            for (size_t c = lo; c < hi && !why; c++)
                why = ev_check_problem(a->outcome, ((const xopkept *)ex_vec_at(&L->opkept, c))->r.passed);
            if (!why && a->facts.has_process)
                why = ev_process_problem(a->facts.records_ok, a->protocol_error);
            if (!why && a->facts.has_process)
                why = ev_record_count_problem(
                    ev_rule_all_stored(a->facts.records_ok, a->facts.interrupted, a->protocol_error),
                    a->facts.skipped, a->record_count, attempt_rows(L, a->attempt_id));
            if (!why && a->facts.has_process)
                why =
                    ev_fault_problem(proto, j->arm, j->has_retry, &a->facts, a->stderr_tail, fault_why, cap);
            if (why)
                return ev_err_set(err, EV_EFORMAT,
                                  "export: the store breaks an invariant: attempt %" PRId64
                                  " of job %s is %s; "
                                  "refusing to export it",
                                  a->attempt_id, j->job_key, why);
        }
    }
    if (L->status.have && L->status.status) {
        for (size_t i = 0; i < L->jobs.n; i++) {
            const xjob *j = ex_vec_at(&L->jobs, i);
            if (!j->n_att || !ev_outcome_final(j->outcome))
                return ev_err_set(
                    err, EV_EFORMAT,
                    "export: the store breaks an invariant: run status %s is set, but job %s %s; "
                    "refusing to export it",
                    L->status.status, j->job_key,
                    j->n_att ? "ends in an interrupted attempt" : "was never attempted");
        }
    }
    return EV_OK;
}

/* Holds the store's rows to the invariants (above); see check_rows. */
static ev_status check_invariants(const xload *L, ev_err *err)
{
    ev_protocol proto;
    char fault_why[400];
    /* the run's protocol, for its fault arms (a protocol that does not
     * parse has none to hold the attempts to: the verifier FAILs it) */
    int proto_ok =
        !ev_protocol_parse(L->run.protocol ? L->run.protocol : "", L->run.protocol_len, &proto, NULL);
    ev_status rc = check_rows(L, proto_ok ? &proto : NULL, fault_why, sizeof fault_why, err);
    if (proto_ok)
        ev_protocol_free(&proto);
    return rc;
}

ev_status ev_export_build(ev_store *s, int64_t run_id, ev_bundle **out, ev_err *err)
{
    ev_status rc = EV_OK;
    xload L;
    ev_bundle_t *B = NULL;
    memset(&L, 0, sizeof L);
    if (run_id <= 0 && (rc = ev_store_last_run(s, &run_id, err)))
        goto out;
    if ((rc = ex_load(s, run_id, &L, err)) || (rc = ex_derive(&L, err)) || (rc = check_invariants(&L, err)))
        goto out;
    B = calloc(1, sizeof *B);
    if (!B) {
        rc = ev_err_set(err, EV_ENOMEM, "export: out of memory");
        goto out;
    }
    B->run_id = run_id;
    if ((rc = build_members(&L, B, err)))
        goto out;
    *out = B;
    B = NULL;
out:
    ev_bundle_free(B);
    ex_xload_free(&L);
    return rc;
}

/* Writes the zip; see export.h. */
ev_status ev_bundle_write(const ev_bundle *b, const char *path, ev_err *err)
{
    return ev_zip_write(path, b->m, b->n, err);
}

/* The whole export; see export.h. */
ev_status ev_export_file(const char *db_path, int64_t run_id, const char *out_path, char root_hex[65],
                         ev_err *err)
{
    ev_store *s = NULL;
    ev_bundle *b = NULL;
    ev_status rc = ev_store_open(db_path, EV_STORE_READONLY | EV_STORE_FULLCHECK, &s, err);
    if (!rc)
        rc = ev_export_build(s, run_id, &b, err);
    if (!rc)
        rc = ev_bundle_write(b, out_path, err);
    if (!rc)
        memcpy(root_hex, ev_bundle_root(b), EV_SHA256_HEX_LEN + 1);
    ev_bundle_free(b);
    ev_store_close(s);
    return rc;
}
