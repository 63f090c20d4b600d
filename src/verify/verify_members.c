/*
 * verify_members.c: check 2, "members".  The archive must hold exactly the
 * required members plus the sources/ and outputs/ members that
 * receipts.json lists: nothing missing, nothing extra.  Each listed
 * member's size and SHA-256 must equal its receipt, receipts.json must be
 * the canonical listing (docs/bundle-format.md, "receipts.json"), and when
 * --expect-root is given the root digest (sha256 of receipts.json) must
 * equal it.  Everything found wrong is reported, member by member.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "evidence/receipts.h"
#include "verify_int.h"

/* Returns 1 when name is one of the fixed required members. */
static int vm_is_required(const char *name)
{
    for (size_t i = 0; i < ev_member_n_required; i++)
        if (!strcmp(ev_member_required[i], name))
            return 1;
    return 0;
}

/* Returns 1 when s is 64 lowercase hex digits. */
static int vm_is_lower_hex64(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == 64;
}

/* Rebuilds the canonical receipts.json text of bundle format version from
 * the archive's members (every member but receipts.json, sorted by name):
 * the exporter's own writer (evidence/receipts.h).  OUT: appended to out. */
static ev_status vm_canonical_receipts(const vb_bundle *b, int version, ev_buf *out)
{
    ev_receipt *r = calloc(b->n ? b->n : 1, sizeof *r);
    size_t k = 0;
    ev_status rc;
    if (!r)
        return EV_ENOMEM;
    for (size_t i = 0; i < b->n; i++) {
        if (!strcmp(b->m[i].name, EV_MEMBER_RECEIPTS))
            continue;
        r[k].name = b->m[i].name;
        r[k].size = (int64_t)b->m[i].len;
        r[k].sha256_hex = b->m[i].sha_hex;
        k++;
    }
    rc = ev_receipts_json(version, r, k, out);
    free(r);
    return rc;
}

/* Checks one receipts entry against the archive; marks the member listed. */
static void vm_check_entry(vb_bundle *b, const cJSON *e, size_t idx, const char *prev, ev_vreport *r)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(e, "sha256");
    if (!cJSON_IsObject(e) || !cJSON_IsString(name) || !cJSON_IsNumber(size) || !cJSON_IsString(sha) ||
        cJSON_GetArraySize(e) != 3) {
        vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS,
                "members[%zu] is not an object of exactly name (string), size (number), sha256 (string)",
                idx);
        return;
    }
    const char *nm = name->valuestring;
    double sz = size->valuedouble;
    if (prev && strcmp(prev, nm) >= 0)
        vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS,
                "members[%zu] '%s' is not after '%s' (names must be sorted and unique)", idx, nm, prev);
    if (!strcmp(nm, EV_MEMBER_RECEIPTS)) {
        vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "lists itself");
        return;
    }
    if (!vm_is_required(nm) && !(ev_member_is_source(nm) || ev_member_is_output(nm)))
        vr_fail(r, VR_MEMBERS, nm,
                "listed in receipts.json but not a bundle member name "
                "(neither required nor under sources/ or outputs/)");
    if (!(sz >= 0 && sz <= 9007199254740992.0) || sz != (double)(int64_t)sz)
        vr_fail(r, VR_MEMBERS, nm, "receipt size is not a non-negative integer");
    if (!vm_is_lower_hex64(sha->valuestring))
        vr_fail(r, VR_MEMBERS, nm, "receipt sha256 is not 64 lowercase hex digits");
    const vb_member *cm = vb_find(b, nm);
    if (!cm) {
        vr_fail(r, VR_MEMBERS, nm, "missing: listed in receipts.json but not in the archive");
        return;
    }
    vb_member *m = (vb_member *)cm;
    m->listed = 1;
    if ((double)m->len != sz)
        vr_fail(r, VR_MEMBERS, nm, "size %zu does not equal its receipt %.17g", m->len, sz);
    if (strcmp(m->sha_hex, sha->valuestring))
        vr_fail(r, VR_MEMBERS, nm, "sha256 %s does not equal its receipt %s", m->sha_hex, sha->valuestring);
}

void vc_members(vb_bundle *b, const ev_verify_opts *o, ev_vreport *r)
{
    ev_err err = {{0}};
    vr_use(r, VR_MEMBERS);

    const vb_member *rec = vb_find(b, EV_MEMBER_RECEIPTS);
    if (!rec) {
        vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "missing required member (it lists every other member)");
    } else {
        /* receipts.json lists the archive's other members, four values
         * each (an object, name, size, sha256): its budget is that, not
         * the whole bundle's (docs/bundle-format.md, "Reading bounds") */
        size_t listing = 4 * b->n + 64, budget = listing < b->json_budget ? listing : b->json_budget;
        size_t left = budget;
        ev_status rc = ev_member_json(EV_MEMBER_RECEIPTS, rec->data, rec->len, EV_JSON_CANONICAL, &left,
                                      &b->receipts, &err);
        b->json_budget -= budget - left;
        if (rc == EV_ENOMEM)
            r->oom = 1;
        else if (rc)
            vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "not strict JSON: %s", err.msg);
    }

    if (b->receipts) {
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(b->receipts, "format");
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(b->receipts, "members");
        const cJSON *bf = cJSON_GetObjectItemCaseSensitive(b->receipts, "bundle_format");
        if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "evident-receipts/1"))
            vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "\"format\" is not \"evident-receipts/1\"");
        /* The bundle format, read first (docs/bundle-format.md, "Bundle
         * format versions"): no key is format 1, which this verifier reads
         * with the same checks. */
        if (!bf)
            b->format = 1;
        else if (cJSON_IsNumber(bf) && bf->valuedouble == EV_BUNDLE_FORMAT)
            b->format = EV_BUNDLE_FORMAT;
        else
            vr_fail(
                r, VR_MEMBERS, EV_MEMBER_RECEIPTS,
                "bundle_format %.17g: this verifier reads bundle formats 1 (no bundle_format key) to %d; a "
                "newer bundle needs a newer verify-bundle",
                cJSON_IsNumber(bf) ? bf->valuedouble : -1.0, EV_BUNDLE_FORMAT);
        if (!cJSON_IsArray(arr)) {
            vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "\"members\" is not an array");
        } else {
            const char *prev = NULL;
            size_t idx = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, arr)
            {
                vm_check_entry(b, e, idx++, prev, r);
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
                prev = cJSON_IsString(nm) ? nm->valuestring : prev;
            }
        }
    }

    /* Required members: present in the archive and listed. */
    for (size_t i = 0; i < ev_member_n_required; i++) {
        const char *nm = ev_member_required[i];
        const vb_member *m = vb_find(b, nm);
        if (!strcmp(nm, EV_MEMBER_RECEIPTS))
            continue;
        if (!m)
            vr_fail(r, VR_MEMBERS, nm, "missing required member");
        else if (b->receipts && !m->listed)
            vr_fail(r, VR_MEMBERS, nm, "required member not listed in receipts.json");
    }
    /* Extra members: in the archive but not listed (or not allowed at all). */
    for (size_t i = 0; i < b->n; i++) {
        const vb_member *m = &b->m[i];
        if (!strcmp(m->name, EV_MEMBER_RECEIPTS) || m->listed || vm_is_required(m->name))
            continue;
        if (!(ev_member_is_source(m->name) || ev_member_is_output(m->name)))
            vr_fail(r, VR_MEMBERS, m->name, "extra member: not a bundle member name");
        else if (b->receipts)
            vr_fail(r, VR_MEMBERS, m->name, "extra member: not listed in receipts.json");
    }

    /* The listing itself must be the canonical text. */
    if (rec && b->receipts && vr_fail_count(r, VR_MEMBERS) == 0) {
        ev_buf canon = EV_BUF_INIT;
        ev_status rc = vm_canonical_receipts(b, b->format, &canon);
        if (rc)
            r->oom = 1;
        else if (canon.len != rec->len || memcmp(canon.data, rec->data, rec->len))
            vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS,
                    "not the canonical listing (docs/bundle-format.md): same entries, different bytes");
        ev_buf_free(&canon);
    }

    if (o && o->expect_root) {
        if (!b->have_root)
            vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "no root digest to compare with --expect-root %s",
                    o->expect_root);
        else if (strcasecmp(b->root_hex, o->expect_root))
            vr_fail(r, VR_MEMBERS, EV_MEMBER_RECEIPTS, "root digest %s does not equal --expect-root %s",
                    b->root_hex, o->expect_root);
        else
            r->root_matches = 1;
    }
}
