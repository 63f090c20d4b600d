-- evident store schema, version 2: migration from version 1
-- (PRAGMA user_version = 2).  Applied after db/schema.sql on a new file, or
-- alone to a version-1 store opened writable (src/store/store.c).  A
-- version-1 store opened read-only is read as it is: it has no shards.
--
-- A sharded run (`evident run --shard I/N --phase main|rest`,
-- docs/runner.md "Shards") records, for every invocation, which shard of
-- how many it ran and which phase; the invocation's environment row is the
-- shard's identity (host hash, device, driver and runtime).  `evident
-- merge` copies these rows with the invocations they belong to, so a
-- merged store still says which shard ran each attempt.

CREATE TABLE shards (
    invocation_id INTEGER PRIMARY KEY REFERENCES invocations(invocation_id),
    shard_index   INTEGER NOT NULL CHECK (shard_index >= 0),
    shard_count   INTEGER NOT NULL CHECK (shard_count >= 1 AND shard_index < shard_count),
    phase         TEXT NOT NULL CHECK (phase IN ('main', 'rest'))
);

CREATE TRIGGER shards_no_update BEFORE UPDATE ON shards BEGIN SELECT RAISE(ABORT, 'evident store is append-only: shards'); END;
CREATE TRIGGER shards_no_delete BEFORE DELETE ON shards BEGIN SELECT RAISE(ABORT, 'evident store is append-only: shards'); END;
CREATE TRIGGER shards_no_replace BEFORE INSERT ON shards WHEN EXISTS (SELECT 1 FROM shards WHERE invocation_id = NEW.invocation_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: shards row exists'); END;
