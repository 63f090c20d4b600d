-- evident store schema, version 5: migration from version 4
-- (PRAGMA user_version = 5).  Applied after db/schema.sql and
-- db/migrate-2.sql .. db/migrate-4.sql on a new file, or alone to a
-- version-4 store opened writable (src/store/store.c).  An older store
-- opened read-only is read as it is: it has no op checks, and its bundle
-- says nothing of them.
--
-- Every op of every replay checked on input it cannot predict
-- (docs/defenses.md, "Every op earns its time"; kernels/plants.h).  A
-- job's ops read V variants of its input, planted before each epoch from
-- the attempt's secret seed, and write an output slot each; after every
-- replay a check node compares every op's planted rows with their
-- expected output and folds the mismatches into a tag chain.  op_checks
-- holds, per cold and hot sample (the worker's `opcheck` record), the tag
-- after replay_end replays, which verify-bundle recomputes from the seed
-- the device record reveals after the samples; op_kept holds the output
-- of one op (kept_op, from the seed) of the last replay of the last hot
-- sample, with its bytes and its validation against the planted input
-- (the worker's `opkept` record), validated again by verify-bundle from
-- the regenerated input and the seed.  A failed op check or kept output
-- is also written as the attempt's failed `final` validation, so
-- outcomes are derived as before.

CREATE TABLE op_checks (
    attempt_id   INTEGER NOT NULL REFERENCES attempts(attempt_id),
    timing       TEXT NOT NULL CHECK (timing IN ('hot', 'cold')),
    sample_index INTEGER NOT NULL CHECK (sample_index >= 0),
    replay_end   INTEGER NOT NULL CHECK (replay_end >= 0), -- replays (cold ones too) run when it was read
    replays      INTEGER NOT NULL CHECK (replays >= 1),    -- the sample's replays
    ops          INTEGER NOT NULL CHECK (ops >= 1),        -- ops per replay (1 for a cold sample)
    rows         INTEGER NOT NULL CHECK (rows >= 0),       -- rows planted per op
    variants     INTEGER NOT NULL CHECK (variants >= 1),
    tag          TEXT NOT NULL,                            -- 16 lowercase hex digits
    passed       INTEGER NOT NULL CHECK (passed IN (0, 1)),
    PRIMARY KEY (attempt_id, timing, sample_index)
);

CREATE TABLE op_kept (
    attempt_id    INTEGER PRIMARY KEY REFERENCES attempts(attempt_id),
    op            INTEGER NOT NULL CHECK (op >= 0),
    replay        INTEGER NOT NULL CHECK (replay >= 1),
    passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
    max_abs_err   REAL NOT NULL,
    bound         REAL NOT NULL,
    mismatches    INTEGER NOT NULL,
    output_sha256 TEXT NOT NULL,
    output        BLOB NOT NULL
);

CREATE TRIGGER op_checks_no_update BEFORE UPDATE ON op_checks BEGIN SELECT RAISE(ABORT, 'evident store is append-only: op_checks'); END;
CREATE TRIGGER op_checks_no_delete BEFORE DELETE ON op_checks BEGIN SELECT RAISE(ABORT, 'evident store is append-only: op_checks'); END;
CREATE TRIGGER op_checks_no_replace BEFORE INSERT ON op_checks WHEN EXISTS (SELECT 1 FROM op_checks WHERE attempt_id = NEW.attempt_id AND timing = NEW.timing AND sample_index = NEW.sample_index) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: op_checks row exists'); END;
CREATE TRIGGER op_kept_no_update BEFORE UPDATE ON op_kept BEGIN SELECT RAISE(ABORT, 'evident store is append-only: op_kept'); END;
CREATE TRIGGER op_kept_no_delete BEFORE DELETE ON op_kept BEGIN SELECT RAISE(ABORT, 'evident store is append-only: op_kept'); END;
CREATE TRIGGER op_kept_no_replace BEFORE INSERT ON op_kept WHEN EXISTS (SELECT 1 FROM op_kept WHERE attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: op_kept row exists'); END;
