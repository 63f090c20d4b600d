-- evident store schema, version 3: migration from version 2
-- (PRAGMA user_version = 3).  Applied after db/schema.sql and
-- db/migrate-2.sql on a new file, or alone to a version-2 store opened
-- writable (src/store/store.c).  A version-1 or version-2 store opened
-- read-only is read as it is: it has no device records, and its bundle
-- says nothing of them (docs/defenses.md).
--
-- One record per attempt of the device's state and the attempt's facts
-- (issue 16; the worker's `device` record, docs/runner.md "Worker
-- records"): the secret rotation seed (written only after the samples),
-- GPU hygiene read through NVML (other compute processes, clock throttle
-- reasons, ECC, MIG and persistence mode, -1 where unknown), the
-- persisting-L2 limit read back, the peer's versions (CUB, torch, triton),
-- and per hot sample the other-process count and throttle reasons.
--
-- Why one JSON text and not typed columns: the record is written by three
-- writers (the C worker on cpu and cuda, the python torch peer) whose
-- facts differ (a peer has versions, the cpu backend has no NVML), and the
-- per-sample arrays would need a table of their own.  The supervisor
-- checks every member of the record before it is stored
-- (src/runner/sup_records.c) and stores it printed canonically, so the
-- text is the record as checked; the export copies it parsed into the
-- attempt's "device" member and verify-bundle re-checks what it can.
-- json_valid keeps anything but a JSON object out.

CREATE TABLE attempt_devices (
    attempt_id INTEGER PRIMARY KEY REFERENCES attempts(attempt_id),
    json       TEXT NOT NULL CHECK (json_valid(json) AND json_type(json) = 'object')
);

CREATE TRIGGER attempt_devices_no_update BEFORE UPDATE ON attempt_devices BEGIN SELECT RAISE(ABORT, 'evident store is append-only: attempt_devices'); END;
CREATE TRIGGER attempt_devices_no_delete BEFORE DELETE ON attempt_devices BEGIN SELECT RAISE(ABORT, 'evident store is append-only: attempt_devices'); END;
CREATE TRIGGER attempt_devices_no_replace BEFORE INSERT ON attempt_devices WHEN EXISTS (SELECT 1 FROM attempt_devices WHERE attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: attempt_devices row exists'); END;
