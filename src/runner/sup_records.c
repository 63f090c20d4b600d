/*
 * sup_records.c: committing a worker's records to the store, batch by
 * batch, and the sample rules applied to an attempt (sup_int.h).
 */
#include "sup_int.h"

/* Puts back the state *saved held before a batch whose rows were rolled
 * back, keeping the rule arrays' current storage (their counts go back). */
static void att_restore(att *a, const att *saved)
{
    att now = *a;
    *a = *saved;
    a->steps = now.steps;
    a->hot = now.hot;
    a->cold = now.cold;
    a->cap_steps = now.cap_steps;
    a->cap_hot = now.cap_hot;
    a->cap_cold = now.cap_cold;
}

/* Appends x to the array *v of *n (capacity *cap).  Returns 0, or -1 when
 * out of memory. */
static int grow(void **v, size_t *n, size_t *cap, size_t size, const void *x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        void *p = realloc(*v, c * size);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    memcpy((char *)*v + *n * size, x, size);
    (*n)++;
    return 0;
}

/* Releases what an attempt's rule facts hold. */
void sup_att_free(att *a)
{
    free(a->steps);
    free(a->hot);
    free(a->cold);
    cJSON_Delete(a->hello_rec);
    a->steps = NULL;
    a->hot = a->cold = NULL;
    a->hello_rec = NULL;
}

/*
 * Applies the sample rules (sample_rules.h) to an attempt whose process
 * otherwise completed (exit 0, every record well-formed, end seen, not
 * skipped, every validation passed): a breach makes it failed-protocol,
 * the breach its protocol_error; its samples stay as committed.  The
 * verifier applies the same function to the bundle.  So does an attempt
 * without its device record (every worker writes one after the samples).
 */
void sup_apply_rules(const sup *s, const char *arm, att *a)
{
    char why[sizeof a->protocol_error];
    a->rules.arm = arm;
    a->rules.completed = 1;
    a->rules.steps = a->steps;
    a->rules.hot = a->hot;
    a->rules.cold = a->cold;
    if (ev_rules_reason(&s->proto, s->o->backend, &a->rules, why, sizeof why) > 0)
        sup_proto_err(a, "%s", why);
    if (!a->has_device)
        sup_proto_err(a, "completed without a device record (docs/runner.md, \"Worker records\")");
}

/* Records the first protocol error of an attempt. */
void sup_proto_err(att *a, const char *fmt, ...)
{
    va_list ap;
    if (!a->records_ok)
        return;
    a->records_ok = 0;
    va_start(ap, fmt);
    vsnprintf(a->protocol_error, sizeof a->protocol_error, fmt, ap);
    va_end(ap);
}

/* Reads an optional boolean member; -1 when missing or not a boolean. */
static int get_bool(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(it) ? cJSON_IsTrue(it) : -1;
}

/*
 * Commits one parsed record of attempt a.  Returns EV_OK, or a store
 * failure that must stop the run (disk full, I/O); a record the store
 * refuses as a constraint violation, or a malformed one, becomes the
 * attempt's protocol error instead.
 */
ev_status sup_commit(sup *s, att *a, ev_rec_type t, const cJSON *r)
{
    ev_err e = {""};
    ev_status rc = EV_OK;
    int64_t id = a->attempt_id;

    if (!a->hello && t != EV_REC_HELLO) {
        sup_proto_err(a, "record %lld: '%s' before hello", (long long)a->count, ev_rec_type_name(t));
        return EV_OK;
    }
    if (a->end) {
        sup_proto_err(a, "record %lld: '%s' after end", (long long)a->count, ev_rec_type_name(t));
        return EV_OK;
    }
    switch (t) {
    case EV_REC_HELLO: {
        const char *aff;
        if (a->hello) {
            sup_proto_err(a, "record %lld: second hello", (long long)a->count);
            return EV_OK;
        }
        a->hello = 1;
        if (ev_json_get_str(r, "affinity", &aff, &e))
            break;
        snprintf(a->affinity, sizeof a->affinity, "%s", aff);
        if (a->probe)
            a->hello_rec = cJSON_Duplicate(r, 1);
        return EV_OK;
    }
    case EV_REC_SKIP: {
        const char *why;
        if (ev_json_get_str(r, "reason", &why, &e))
            break;
        a->skipped = 1;
        snprintf(a->skip_reason, sizeof a->skip_reason, "%s", why);
        return EV_OK;
    }
    case EV_REC_END: {
        int64_t n;
        if (ev_json_get_i64(r, "records", &n, &e))
            break;
        if (n != a->count - 1) {
            sup_proto_err(a, "end says %lld records, %lld came before it", (long long)n,
                          (long long)(a->count - 1));
            return EV_OK;
        }
        a->end = 1;
        return EV_OK;
    }
    default:
        break;
    }
    if (e.msg[0]) {
        sup_proto_err(a, "record %lld (%s): %s", (long long)a->count, ev_rec_type_name(t), e.msg);
        return EV_OK;
    }
    if (a->probe)
        return EV_OK;

    switch (t) {
    case EV_REC_BINDING: {
        ev_binding_row b;
        if (ev_json_get_str(r, "op", &b.op, &e) || ev_json_get_str(r, "dtype", &b.dtype, &e) ||
            ev_json_get_i64(r, "rows", &b.rows, &e) || ev_json_get_i64(r, "cols", &b.cols, &e) ||
            ev_json_get_i64(r, "stride", &b.stride, &e) || ev_json_get_i64(r, "in_span", &b.in_span, &e) ||
            ev_json_get_i64(r, "out_span", &b.out_span, &e) ||
            ev_json_get_i64(r, "in_align", &b.in_align, &e) ||
            ev_json_get_i64(r, "out_align", &b.out_align, &e) ||
            ev_json_get_i64(r, "threads", &b.threads, &e))
            break;
        rc = ev_store_add_binding(s->st, id, &b, &e);
        break;
    }
    case EV_REC_VALIDATION: {
        ev_validation_row v;
        const char *hex = NULL;
        unsigned char *bytes = NULL;
        const cJSON *oh = cJSON_GetObjectItemCaseSensitive(r, "output_hex");
        memset(&v, 0, sizeof v);
        v.passed = get_bool(r, "passed");
        if (v.passed < 0) {
            ev_err_set(&e, EV_EFORMAT, "passed: must be true or false");
            break;
        }
        if (ev_json_get_str(r, "stage", &v.stage, &e) ||
            ev_json_get_double(r, "max_abs_err", &v.max_abs_err, &e) ||
            ev_json_get_double(r, "bound", &v.bound, &e) ||
            ev_json_get_i64(r, "mismatches", &v.mismatches, &e) ||
            ev_json_get_str(r, "output_sha256", &v.output_sha256, &e))
            break;
        if (oh) {
            size_t len;
            if (!cJSON_IsString(oh) || (len = strlen(oh->valuestring)) % 2) {
                ev_err_set(&e, EV_EFORMAT, "output_hex: must be an even-length hex string");
                break;
            }
            hex = oh->valuestring;
            bytes = malloc(len / 2 + 1);
            if (!bytes)
                return ev_err_set(NULL, EV_ENOMEM, "out of memory");
            if (ev_hex_decode(hex, len / 2, bytes)) {
                free(bytes);
                ev_err_set(&e, EV_EFORMAT, "output_hex: not hex");
                break;
            }
            v.output = bytes;
            v.output_len = len / 2;
        }
        if (!v.passed)
            a->validation_failed = 1;
        rc = ev_store_add_validation(s->st, id, &v, &e);
        free(bytes);
        break;
    }
    case EV_REC_COLD: {
        const char *name;
        int64_t ns;
        if (ev_json_get_str(r, "name", &name, &e) || ev_json_get_i64(r, "elapsed_ns", &ns, &e))
            break;
        rc = ev_store_add_cold_timing(s->st, id, name, ns, &e);
        if (!rc && (!strcmp(name, "compile-first-call")))
            a->compile_ns += ns;
        else if (!rc && (!strcmp(name, "device-open") || !strcmp(name, "cuda-init")))
            a->open_ns += ns;
        break;
    }
    case EV_REC_FLUSH: {
        int64_t fb, cb;
        if (ev_json_get_i64(r, "flush_bytes", &fb, &e) || ev_json_get_i64(r, "cache_bytes", &cb, &e))
            break;
        rc = ev_store_add_flush(s->st, id, fb, cb, &e);
        if (rc == EV_OK) {
            a->rules.has_flush = 1;
            a->rules.flush_bytes = fb;
            a->rules.cache_bytes = cb;
        }
        break;
    }
    case EV_REC_NODE: {
        ev_node_row n;
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(r, "grid"),
                    *b = cJSON_GetObjectItemCaseSensitive(r, "block");
        if (ev_json_get_i64(r, "index", &n.node_index, &e) || ev_json_get_str(r, "function", &n.function, &e))
            break;
        if (!cJSON_IsArray(g) || !cJSON_IsArray(b) || cJSON_GetArraySize(g) != 3 ||
            cJSON_GetArraySize(b) != 3) {
            ev_err_set(&e, EV_EFORMAT, "grid and block: must be arrays of 3 integers");
            break;
        }
        for (int d = 0; d < 3; d++) {
            n.grid[d] = (int64_t)cJSON_GetArrayItem(g, d)->valuedouble;
            n.block[d] = (int64_t)cJSON_GetArrayItem(b, d)->valuedouble;
        }
        rc = ev_store_add_graph_node(s->st, id, &n, &e);
        break;
    }
    case EV_REC_WARMUP: {
        double target, ms;
        int64_t reps;
        if (ev_json_get_double(r, "target_ms", &target, &e) || ev_json_get_double(r, "elapsed_ms", &ms, &e) ||
            ev_json_get_i64(r, "replays", &reps, &e))
            break;
        a->warmup = 1;
        rc = ev_store_add_warmup(s->st, id, target, ms, reps, &e);
        if (rc == EV_OK) {
            a->rules.has_warmup = 1;
            a->rules.warmup_target_ms = target;
            a->rules.warmup_elapsed_ms = ms;
        }
        break;
    }
    case EV_REC_CALIBRATION: {
        int64_t step, reps;
        double ms, target;
        int chosen = get_bool(r, "chosen");
        if (chosen < 0) {
            ev_err_set(&e, EV_EFORMAT, "chosen: must be true or false");
            break;
        }
        if (ev_json_get_i64(r, "step", &step, &e) || ev_json_get_i64(r, "replays", &reps, &e) ||
            ev_json_get_double(r, "elapsed_ms", &ms, &e) || ev_json_get_double(r, "target_ms", &target, &e))
            break;
        rc = ev_store_add_calibration(s->st, id, step, reps, ms, chosen, target, &e);
        if (rc == EV_OK) {
            ev_rule_step st = {reps, target, chosen};
            if (grow((void **)&a->steps, &a->rules.n_steps, &a->cap_steps, sizeof st, &st))
                return ev_err_set(NULL, EV_ENOMEM, "out of memory");
        }
        break;
    }
    case EV_REC_SAMPLE: {
        ev_sample_row x;
        const cJSON *clk = cJSON_GetObjectItemCaseSensitive(r, "sm_clock_mhz");
        if (ev_json_get_str(r, "timing", &x.timing, &e) || ev_json_get_i64(r, "index", &x.sample_index, &e) ||
            ev_json_get_i64(r, "replays", &x.replays, &e) ||
            ev_json_get_i64(r, "ops_per_graph", &x.ops_per_graph, &e) ||
            ev_json_get_double(r, "elapsed_ms", &x.elapsed_ms, &e))
            break;
        x.sm_clock_mhz = -1;
        if (clk && !cJSON_IsNull(clk) && ev_json_get_i64(r, "sm_clock_mhz", &x.sm_clock_mhz, &e))
            break;
        rc = ev_store_add_sample(s->st, id, &x, &e);
        if (rc == EV_OK) {
            ev_rule_sample rs = {x.elapsed_ms, x.replays, x.ops_per_graph, x.sm_clock_mhz, -1, -1, -1};
            int hot = !strcmp(x.timing, "hot");
            if (hot ? grow((void **)&a->hot, &a->rules.n_hot, &a->cap_hot, sizeof rs, &rs)
                    : grow((void **)&a->cold, &a->rules.n_cold, &a->cap_cold, sizeof rs, &rs))
                return ev_err_set(NULL, EV_ENOMEM, "out of memory");
        }
        break;
    }
    case EV_REC_DEVICE: {
        /* checked member by member (sample_rules.h: the verifier reads the
         * bundle's copy with the same function), stored printed without
         * its type; its per-sample facts join the hot samples for the rules */
        char why[256];
        ev_buf text = EV_BUF_INIT;
        cJSON *copy;
        if (a->has_device) {
            sup_proto_err(a, "record %lld: second device record", (long long)a->count);
            return EV_OK;
        }
        if (ev_rule_device_read(r, a->hot, a->rules.n_hot, a->cold, a->rules.n_cold, why, sizeof why)) {
            ev_err_set(&e, EV_EFORMAT, "%s", why);
            break;
        }
        if (!(copy = cJSON_Duplicate(r, 1)))
            return ev_err_set(NULL, EV_ENOMEM, "out of memory");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "type");
        rc = ev_json_print(copy, 0, &text);
        cJSON_Delete(copy);
        if (rc) {
            ev_buf_free(&text);
            return ev_err_set(NULL, rc, "out of memory");
        }
        if (text.len && text.data[text.len - 1] == '\n')
            text.data[--text.len] = '\0';
        rc = ev_store_add_device(s->st, id, text.data, &e);
        ev_buf_free(&text);
        if (rc == EV_OK)
            a->has_device = 1;
        break;
    }
    default:
        break;
    }
    if (rc == EV_EDB || rc == EV_EFORMAT || rc == EV_EINVAL) {
        sup_proto_err(a, "record %lld (%s) refused by the store: %s", (long long)a->count,
                      ev_rec_type_name(t), e.msg);
        return EV_OK;
    }
    if (rc)
        return rc; /* store failure: stop the run */
    if (e.msg[0])
        sup_proto_err(a, "record %lld (%s): %s", (long long)a->count, ev_rec_type_name(t), e.msg);
    return EV_OK;
}

/* Handles one complete line of the record stream. */
static ev_status on_line(sup *s, att *a, const char *line, size_t n)
{
    cJSON *r = NULL;
    ev_rec_type t;
    ev_err e = {""};
    ev_status rc;

    a->count++;
    if (ev_rec_parse(line, n, &r, &t, &e)) {
        sup_proto_err(a, "record %lld: %s", (long long)a->count, e.msg);
        return EV_OK;
    }
    rc = sup_commit(s, a, t, r);
    cJSON_Delete(r);
    return rc;
}

/* Handles lines [0, n) of buf (complete lines, newline-terminated). */
static ev_status each_line(sup *s, att *a, const char *p, size_t n)
{
    ev_status rc = EV_OK;
    while (n && !rc) {
        const char *nl = memchr(p, '\n', n);
        size_t len = (size_t)(nl - p);
        rc = on_line(s, a, p, len);
        n -= len + 1;
        p = nl + 1;
    }
    return rc;
}

/*
 * Commits every complete line now in buf as one transaction (records that
 * arrive together are committed together: one fsync, not one per record),
 * then removes them from buf.  When the store refuses a row of the group
 * (a constraint: a hostile worker's duplicate), the group was rolled back
 * whole: its lines are committed again one by one, so only the refused
 * record is lost and becomes the attempt's protocol error.  Returns a store
 * failure that must stop the run.
 */
ev_status sup_on_lines(sup *s, att *a, ev_buf *buf)
{
    const char *last = NULL;
    size_t n;
    att saved = *a;
    ev_err e = {""};
    ev_status rc;

    for (const char *p = buf->data; p && (p = memchr(p, '\n', buf->len - (size_t)(p - buf->data))); p++)
        last = p;
    if (!last)
        return EV_OK;
    n = (size_t)(last - buf->data) + 1;
    if (a->probe || memchr(buf->data, '\n', n - 1) == NULL) {
        rc = each_line(s, a, buf->data, n); /* one record: its own transaction */
    } else if ((rc = ev_store_begin(s->st, &e)) == EV_OK) {
        rc = each_line(s, a, buf->data, n);
        if (rc) {
            ev_store_rollback(s->st);
            att_restore(a, &saved);
        } else if ((rc = ev_store_commit(s->st, &e)) != EV_OK &&
                   (rc == EV_EDB || rc == EV_EINVAL || rc == EV_EFORMAT)) {
            att_restore(a, &saved); /* each line again, alone: the refused one becomes the protocol error */
            rc = each_line(s, a, buf->data, n);
        } else if (rc) {
            att_restore(a, &saved);
        }
    }
    if (rc && !a->store_failed) {
        /* The records of this batch are not in the store (rolled back, or
         * the one record refused): the attempt can never count as
         * completed; its process row says interrupted, so --resume runs
         * it again. */
        a->store_failed = 1;
        snprintf(a->store_error, sizeof a->store_error, "store write failed: %s: %.400s", ev_strerror(rc),
                 e.msg);
    }
    memmove(buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
    buf->data[buf->len] = '\0';
    return rc;
}
