-- evident store schema, version 4: migration from version 3
-- (PRAGMA user_version = 4).  Applied after db/schema.sql and
-- db/migrate-2.sql and db/migrate-3.sql on a new file, or alone to a
-- version-3 store opened writable (src/store/store.c).  An older store
-- opened read-only is read as it is: it has no sample checks, and its
-- bundle says nothing of them.
--
-- The output checks after timed samples (issue 16; the worker's `check`
-- record, docs/runner.md "Worker records"), each with its output's bytes:
-- after the hot sample before which rows of the case's input were
-- rewritten from the attempt's secret seed, the output of that input
-- (input_set 0) and of the second input set (1); after the last sample,
-- the second set's again (after_sample -1; set 0's is the `final`
-- validation).  The seed is in the attempt's device record, written after
-- the samples, so verify-bundle can regenerate both inputs and validate
-- these bytes again.  A check whose bytes an earlier check of the same
-- attempt and input set already holds (the same output_sha256: the
-- second set's output after the last sample is, for a deterministic
-- kernel, its output after the rotated one) keeps NULL, as the `final`
-- validation does.  A failed check is also written as the attempt's
-- failed `final` validation, so outcomes are derived as before.

CREATE TABLE sample_checks (
    attempt_id    INTEGER NOT NULL REFERENCES attempts(attempt_id),
    input_set     INTEGER NOT NULL CHECK (input_set IN (0, 1)),
    after_sample  INTEGER NOT NULL CHECK (after_sample >= -1), -- the hot sample it followed; -1: the last
    passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
    max_abs_err   REAL NOT NULL,
    bound         REAL NOT NULL,
    mismatches    INTEGER NOT NULL,
    output_sha256 TEXT NOT NULL,
    output        BLOB,                     -- NULL: an earlier check of the set holds these bytes
    PRIMARY KEY (attempt_id, input_set, after_sample)
);

CREATE TRIGGER sample_checks_no_update BEFORE UPDATE ON sample_checks BEGIN SELECT RAISE(ABORT, 'evident store is append-only: sample_checks'); END;
CREATE TRIGGER sample_checks_no_delete BEFORE DELETE ON sample_checks BEGIN SELECT RAISE(ABORT, 'evident store is append-only: sample_checks'); END;
CREATE TRIGGER sample_checks_no_replace BEFORE INSERT ON sample_checks WHEN EXISTS (SELECT 1 FROM sample_checks WHERE attempt_id = NEW.attempt_id AND input_set = NEW.input_set AND after_sample = NEW.after_sample) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: sample_checks row exists'); END;
