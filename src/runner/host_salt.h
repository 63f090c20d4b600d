/*
 * host_salt.h: the salt of a store's host identity hashes (docs/threat-model.md).
 *
 * Host names, the machine id and GPU UUIDs are stored only as salted
 * SHA-256 hashes (ev_host_hash_salted).  Stores written before the salt
 * existed used the constant "evident-host-v1"; a store begun since gets 16
 * random bytes (getrandom), recorded as "host_salt" (32 hex digits) in each
 * environment record of the store, so every run and invocation of that
 * store hashes alike and a reader holding the store can tell which salt
 * each record used.  What it hides and what it does not: docs/threat-model.md.
 */
#ifndef EV_RUNNER_HOST_SALT_H
#define EV_RUNNER_HOST_SALT_H

#include <stdint.h>

#include "status.h"
#include "store/store.h"

#define EV_HOST_SALT_HEX 32

/*
 * The salt for a new invocation of run_id in store st.  OUT: salt_hex, 32
 * hex digits, or "" for the constant salt.  A run that already has an
 * environment record keeps that record's salt ("" when it has none: a run
 * begun before salts, resumed); otherwise the store's first recorded salt
 * is used; otherwise a fresh random one.  EV_EIO when no random bytes can
 * be had; EV_EDB (err) when the store cannot be read.
 */
ev_status ev_host_salt_for(ev_store *st, int64_t run_id, char salt_hex[EV_HOST_SALT_HEX + 1], ev_err *err);

/* SHA-256 of a host identifier under salt_hex ("" gives ev_host_hash's
 * constant-salt hash, so old stores hash as before):
 * "evident-host-v2\0" + salt_hex + "\0" + id otherwise. */
ev_status ev_host_hash_salted(const char *salt_hex, const char *id, char hex[65]);

#endif
