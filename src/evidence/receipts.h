/*
 * receipts.h: receipts.json, one writer for the exporter (which lists the
 * members it wrote) and the verifier (which rebuilds the canonical listing
 * from the members it read and requires the same bytes).  The listing
 * names the bundle format (docs/bundle-format.md, "Bundle format
 * versions"): the verifier reads it first.
 */
#ifndef EV_RECEIPTS_H
#define EV_RECEIPTS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"

/* The bundle format this code writes.  1: bundles exported before the
 * receipts named their format (no "bundle_format" key); 2: the same
 * members, and receipts.json says "bundle_format": 2. */
#define EV_BUNDLE_FORMAT 2

/* One member's receipt. */
typedef struct ev_receipt {
    const char *name;
    int64_t size;
    const char *sha256_hex; /* 64 lowercase hex digits */
} ev_receipt;

/* Appends receipts.json of bundle format version (1 or 2) listing
 * r[0..n) (sorted by name; receipts.json itself not among them).
 * EV_EINVAL for another version; EV_ENOMEM. */
ev_status ev_receipts_json(int version, const ev_receipt *r, size_t n, ev_buf *out);

#endif
