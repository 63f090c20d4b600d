/*
 * verify_formats.c: check 3, "formats".  Every JSON member goes through the
 * strict lexer (src/common/json.h) before cJSON builds its tree: grammar,
 * duplicate keys, depth cap, trailing bytes, "\u0000", and, for every
 * member the exporter writes, canonical numbers (a double must read back
 * to the bits of the text written).  protocol.json is human-written: any
 * finite decimal is accepted there.  samples.csv goes through the strict
 * CSV reader with the documented 24-column header, every cell typed, the
 * documented row order, doubles in canonical text, and the job-level
 * columns constant over each job's rows.  The parsed trees and the
 * samples table are kept in the bundle for checks 4 to 6.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "json.h"
#include "utf8.h"
#include "store/outcome.h"
#include "verify_int.h"

/* Parses one JSON member into *slot.  canonical selects EV_JSON_CANONICAL.
 * Records failures under check 3; *slot stays NULL on failure. */
static void vf_json_member(vb_bundle *b, const char *name, int canonical, cJSON **slot, ev_vreport *r)
{
    const vb_member *m = vb_find(b, name);
    ev_err err = {{0}};
    if (!m) {
        vr_not_run(r, VR_FORMATS, "%s is missing (check 2)", name);
        return;
    }
    ev_status rc =
        ev_member_json(name, m->data, m->len, canonical ? EV_JSON_CANONICAL : 0, &b->json_budget, slot, &err);
    if (rc == EV_ENOMEM) {
        r->oom = 1;
        return;
    }
    if (rc) {
        vr_fail(r, VR_FORMATS, name, "not strict JSON: %s", err.msg);
        return;
    }
    if (canonical && (m->len == 0 || m->data[m->len - 1] != '\n'))
        vr_fail(r, VR_FORMATS, name, "does not end with one newline");
    if (!cJSON_IsObject(*slot)) {
        vr_fail(r, VR_FORMATS, name, "top level is not an object");
        cJSON_Delete(*slot);
        *slot = NULL;
    }
}

/* Checks that a JSON member's "format" names its member and version. */
static void vf_format_tag(const cJSON *tree, const char *name, const char *want, ev_vreport *r)
{
    if (!tree)
        return;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(tree, "format");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, want))
        vr_fail(r, VR_FORMATS, name, "\"format\" is not \"%s\"", want);
}

/* Printing (docs/bundle-format.md, "JSON printing"): the member is its
 * parsed tree printed by ev_json_print(tree, 1) with numbers in canonical
 * text (the printer ends it with one newline): key order, spacing and
 * number text are the exporter's.  tree is the canonically parsed member (not modified). */
static void vf_printed(const vb_bundle *b, const char *name, const cJSON *tree, ev_vreport *r)
{
    const vb_member *m = vb_find(b, name);
    size_t i = 0;
    if (!m || !tree)
        return;
    /* compared as printed, never copied or printed whole */
    if (!ev_json_print_equals(tree, (const char *)m->data, m->len, &i))
        vr_fail(r, VR_FORMATS, name,
                "is not printed as the exporter prints it (ev_json_print, canonical numbers, one final "
                "newline): first difference at byte %zu",
                i);
}

void vc_formats(vb_bundle *b, ev_vreport *r)
{
    vr_use(r, VR_FORMATS);
    /* receipts.json was parsed (canonically) by check 2. */
    vf_json_member(b, EV_MEMBER_PROTOCOL, 0, &b->protocol, r);
    vf_json_member(b, EV_MEMBER_VALIDATION, 1, &b->validation, r);
    vf_json_member(b, EV_MEMBER_MODEL, 1, &b->model, r);
    vf_json_member(b, EV_MEMBER_PROOF, 1, &b->proof, r);
    vf_json_member(b, EV_MEMBER_PROVENANCE, 1, &b->provenance, r);
    vf_format_tag(b->validation, EV_MEMBER_VALIDATION, "evident-validation/1", r);
    vf_format_tag(b->proof, EV_MEMBER_PROOF, "evident-proof-receipts/1", r);
    vf_format_tag(b->provenance, EV_MEMBER_PROVENANCE, "evident-provenance/1", r);
    vb_read_samples(b, r);
    vf_printed(b, EV_MEMBER_VALIDATION, b->validation, r);
    vf_printed(b, EV_MEMBER_PROOF, b->proof, r);
    vf_printed(b, EV_MEMBER_PROVENANCE, b->provenance, r);

    const vb_member *h = vb_find(b, EV_MEMBER_REPORT);
    if (h) {
        /* Text rules of docs/bundle-format.md: UTF-8, no NUL, one final LF. */
        if (memchr(h->data, '\0', h->len))
            vr_fail(r, VR_FORMATS, EV_MEMBER_REPORT, "holds a NUL byte");
        if (!ev_utf8_valid((const unsigned char *)h->data, h->len))
            vr_fail(r, VR_FORMATS, EV_MEMBER_REPORT, "is not valid UTF-8");
        if (h->len == 0 || h->data[h->len - 1] != '\n')
            vr_fail(r, VR_FORMATS, EV_MEMBER_REPORT, "does not end with a newline");
    }
}
