-- evident store schema, version 1 (PRAGMA user_version = 1).
--
-- This file is the only place SQL DDL lives.  The store module
-- (src/store/store.c) runs it on a new database inside one transaction and
-- sets user_version; later versions add numbered migrations beside it.
--
-- Every evidence table is append-only: BEFORE UPDATE / BEFORE DELETE
-- triggers raise, and no statement anywhere uses INSERT OR REPLACE or an
-- upsert (with recursive_triggers=ON a REPLACE would fire the DELETE
-- trigger too, and fail).  Times are integer nanoseconds; measured floats
-- are stored as they were measured (REAL).  Anything "set once" (run
-- status, fit) is a row inserted once, guarded by a UNIQUE constraint.

-- One row per `evident run` (a run may span many invocations via --resume).
CREATE TABLE runs (
    run_id           INTEGER PRIMARY KEY,
    protocol_id      TEXT NOT NULL,         -- sha256 hex of protocol bytes
    protocol_bytes   BLOB NOT NULL,         -- the protocol file, byte for byte
    protocol_path    TEXT NOT NULL,         -- as given (relative or redacted)
    backend          TEXT NOT NULL CHECK (backend IN ('cpu', 'cuda')),
    seed             INTEGER NOT NULL,
    git_commit       TEXT NOT NULL,         -- 40 hex or 'unknown'
    git_dirty        INTEGER NOT NULL CHECK (git_dirty IN (0, 1)),
    source_tree_hash TEXT NOT NULL,         -- sha256 over sorted (path, sha256)
    created_ns       INTEGER NOT NULL
);

-- Each invocation of `evident run` (the first, and every --resume).
CREATE TABLE invocations (
    invocation_id INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(run_id),
    started_ns    INTEGER NOT NULL,
    resumed       INTEGER NOT NULL CHECK (resumed IN (0, 1)),
    host_hash     TEXT NOT NULL             -- salted hash of the host name
);

-- The measurement closure's source bytes, snapshotted before measuring.
CREATE TABLE sources (
    run_id  INTEGER NOT NULL REFERENCES runs(run_id),
    path    TEXT NOT NULL,                  -- relative, '/'-separated
    sha256  TEXT NOT NULL,
    bytes   BLOB NOT NULL,
    PRIMARY KEY (run_id, path)
);

-- The redacted environment record (JSON text) per invocation; the profile
-- id is the sha256 of these bytes.
CREATE TABLE environments (
    invocation_id INTEGER PRIMARY KEY REFERENCES invocations(invocation_id),
    profile_id    TEXT NOT NULL,
    json          TEXT NOT NULL
);

-- Cases of the protocol, in protocol order (case_index from 0).  op,
-- dtype and role are words of the vocabulary (src/common/vocab.h): the
-- store's writer refuses any other (ev_store_add_case), so no list of them
-- is spelled here (docs/store.md, "Vocabulary").
CREATE TABLE cases (
    run_id       INTEGER NOT NULL REFERENCES runs(run_id),
    case_index   INTEGER NOT NULL,
    op           TEXT NOT NULL,
    rows         INTEGER NOT NULL CHECK (rows >= 0),
    cols         INTEGER NOT NULL CHECK (cols >= 0),
    stride       INTEGER NOT NULL,
    dtype        TEXT NOT NULL,
    default_rows INTEGER NOT NULL CHECK (default_rows >= 1),
    role         TEXT NOT NULL,
    PRIMARY KEY (run_id, case_index)
);

-- Planned jobs.  job_key is stable: "<phase>/<case or ->/<arm>/<label>".
-- phase: main, policy, rescue (label retry-1, retry_of the original), recheck.
-- Reference arms (floor, ceiling) are main-phase jobs with case_index NULL.
CREATE TABLE jobs (
    job_id      INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(run_id),
    job_key     TEXT NOT NULL,
    phase       TEXT NOT NULL,             -- a phase of the vocabulary (ev_store_add_job)
    case_index  INTEGER,
    arm         TEXT NOT NULL,
    label       TEXT NOT NULL,
    retry_of    INTEGER REFERENCES jobs(job_id),
    plan_order  INTEGER NOT NULL,
    UNIQUE (run_id, job_key),
    UNIQUE (run_id, phase, plan_order),
    FOREIGN KEY (run_id, case_index) REFERENCES cases(run_id, case_index)
);

-- Each attempt of a job (1, 2, ... : a new attempt after an interruption).
CREATE TABLE attempts (
    attempt_id    INTEGER PRIMARY KEY,
    job_id        INTEGER NOT NULL REFERENCES jobs(job_id),
    attempt       INTEGER NOT NULL CHECK (attempt >= 1),
    invocation_id INTEGER NOT NULL REFERENCES invocations(invocation_id),
    started_ns    INTEGER NOT NULL,
    UNIQUE (job_id, attempt)
);

-- The raw process record of an attempt, written once when it ended.  The
-- outcome is derived from it (src/store/outcome.c), never stored alone.
-- An attempt without a process row was cut off by a supervisor crash;
-- --resume writes its row with interrupted = 1 and pid as it was known.
CREATE TABLE processes (
    attempt_id     INTEGER PRIMARY KEY REFERENCES attempts(attempt_id),
    pid            INTEGER,
    exit_code      INTEGER,                 -- WEXITSTATUS, NULL if signalled
    signal         INTEGER,                 -- WTERMSIG, NULL if exited
    timed_out      INTEGER NOT NULL CHECK (timed_out IN (0, 1)),
    interrupted    INTEGER NOT NULL CHECK (interrupted IN (0, 1)),
    skipped        INTEGER NOT NULL CHECK (skipped IN (0, 1)), -- worker said it cannot run here
    skip_reason    TEXT,                    -- the host's own error text
    record_count   INTEGER NOT NULL,
    records_ok     INTEGER NOT NULL CHECK (records_ok IN (0, 1)), -- all records well-formed, 'end' seen
    protocol_error TEXT,                    -- why records_ok = 0
    affinity       TEXT NOT NULL,           -- CPU list the OS reported back
    stderr_tail    TEXT NOT NULL,           -- absolute paths redacted
    ended_ns       INTEGER NOT NULL,
    wall_ns        INTEGER NOT NULL,
    CHECK (exit_code IS NULL OR signal IS NULL) -- waitpid gives one or the other
);

-- Where and how the job bound its buffers.
CREATE TABLE bindings (
    attempt_id   INTEGER PRIMARY KEY REFERENCES attempts(attempt_id),
    op           TEXT NOT NULL,
    dtype        TEXT NOT NULL,
    rows         INTEGER NOT NULL,
    cols         INTEGER NOT NULL,
    stride       INTEGER NOT NULL,
    in_span      INTEGER NOT NULL,          -- bytes
    out_span     INTEGER NOT NULL,          -- bytes
    in_align     INTEGER NOT NULL,          -- largest power of two dividing the address (<= 256)
    out_align    INTEGER NOT NULL,
    threads      INTEGER NOT NULL           -- S: SMs (cuda) or worker threads (cpu)
);

-- Timed samples: hot (graph/batch replays) or cold (L2/cache-flushed single launches).
CREATE TABLE samples (
    attempt_id    INTEGER NOT NULL REFERENCES attempts(attempt_id),
    timing        TEXT NOT NULL CHECK (timing IN ('hot', 'cold')),
    sample_index  INTEGER NOT NULL,
    replays       INTEGER NOT NULL CHECK (replays >= 1),
    ops_per_graph INTEGER NOT NULL CHECK (ops_per_graph >= 1),
    elapsed_ms    REAL NOT NULL,            -- raw, as the timer returned it
    sm_clock_mhz  INTEGER,                  -- NULL: unavailable
    PRIMARY KEY (attempt_id, timing, sample_index)
);

CREATE TABLE warmups (
    attempt_id  INTEGER PRIMARY KEY REFERENCES attempts(attempt_id),
    target_ms   REAL NOT NULL,
    elapsed_ms  REAL NOT NULL,
    replays     INTEGER NOT NULL
);

-- Calibration steps (trial replay counts and their times) and the choice.
CREATE TABLE calibrations (
    attempt_id  INTEGER NOT NULL REFERENCES attempts(attempt_id),
    step        INTEGER NOT NULL,
    replays     INTEGER NOT NULL,
    elapsed_ms  REAL NOT NULL,
    chosen      INTEGER NOT NULL CHECK (chosen IN (0, 1)),
    target_ms   REAL NOT NULL,
    PRIMARY KEY (attempt_id, step)
);

-- Cold timings by name: 'first-launch' (process-cold, host clock, module
-- load included), 'import', 'compile' (torch-compile), ...
CREATE TABLE cold_timings (
    attempt_id  INTEGER NOT NULL REFERENCES attempts(attempt_id),
    name        TEXT NOT NULL,
    elapsed_ns  INTEGER NOT NULL,
    PRIMARY KEY (attempt_id, name)
);

-- The cache flush used for cold samples.
CREATE TABLE flushes (
    attempt_id  INTEGER PRIMARY KEY REFERENCES attempts(attempt_id),
    flush_bytes INTEGER NOT NULL,
    cache_bytes INTEGER NOT NULL            -- L2 (cuda) or last-level cache (cpu)
);

-- Output validation: 'first' (after the first launch) and 'final' (after
-- the samples: replay determinism needs the same hash).
CREATE TABLE validations (
    attempt_id    INTEGER NOT NULL REFERENCES attempts(attempt_id),
    stage         TEXT NOT NULL CHECK (stage IN ('first', 'final')),
    passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
    max_abs_err   REAL NOT NULL,
    bound         REAL NOT NULL,            -- SUM bound used (0 for MAX: bitwise)
    mismatches    INTEGER NOT NULL,
    output_sha256 TEXT NOT NULL,
    output        BLOB,                     -- output bytes (stage 'first' only)
    PRIMARY KEY (attempt_id, stage)
);

-- Kernel nodes read back from the instantiated graph (cuda), or the entry
-- and task partition (cpu: grid_x = tasks, block_x = rows per task).
CREATE TABLE graph_nodes (
    attempt_id  INTEGER NOT NULL REFERENCES attempts(attempt_id),
    node_index  INTEGER NOT NULL,
    function    TEXT NOT NULL,
    grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
    block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
    PRIMARY KEY (attempt_id, node_index)
);

-- Model fits recorded by `evident run` (phase fit) or `evident fit --db`.
CREATE TABLE fits (
    fit_id      INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(run_id),
    created_ns  INTEGER NOT NULL,
    model_json  TEXT NOT NULL,
    sha256      TEXT NOT NULL
);

-- Run status, set once.
CREATE TABLE run_status (
    run_id        INTEGER PRIMARY KEY REFERENCES runs(run_id),
    status        TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
    rescue_status TEXT CHECK (rescue_status IN ('completed-after-rescue', 'failed-after-rescue')),
    finished_ns   INTEGER NOT NULL
);

CREATE INDEX attempts_by_job ON attempts(job_id);
CREATE INDEX jobs_by_run ON jobs(run_id, phase);

-- Append-only: no table above may be updated or deleted from.
CREATE TRIGGER runs_no_update BEFORE UPDATE ON runs BEGIN SELECT RAISE(ABORT, 'evident store is append-only: runs'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'evident store is append-only: runs'); END;
CREATE TRIGGER invocations_no_update BEFORE UPDATE ON invocations BEGIN SELECT RAISE(ABORT, 'evident store is append-only: invocations'); END;
CREATE TRIGGER invocations_no_delete BEFORE DELETE ON invocations BEGIN SELECT RAISE(ABORT, 'evident store is append-only: invocations'); END;
CREATE TRIGGER sources_no_update BEFORE UPDATE ON sources BEGIN SELECT RAISE(ABORT, 'evident store is append-only: sources'); END;
CREATE TRIGGER sources_no_delete BEFORE DELETE ON sources BEGIN SELECT RAISE(ABORT, 'evident store is append-only: sources'); END;
CREATE TRIGGER environments_no_update BEFORE UPDATE ON environments BEGIN SELECT RAISE(ABORT, 'evident store is append-only: environments'); END;
CREATE TRIGGER environments_no_delete BEFORE DELETE ON environments BEGIN SELECT RAISE(ABORT, 'evident store is append-only: environments'); END;
CREATE TRIGGER cases_no_update BEFORE UPDATE ON cases BEGIN SELECT RAISE(ABORT, 'evident store is append-only: cases'); END;
CREATE TRIGGER cases_no_delete BEFORE DELETE ON cases BEGIN SELECT RAISE(ABORT, 'evident store is append-only: cases'); END;
CREATE TRIGGER jobs_no_update BEFORE UPDATE ON jobs BEGIN SELECT RAISE(ABORT, 'evident store is append-only: jobs'); END;
CREATE TRIGGER jobs_no_delete BEFORE DELETE ON jobs BEGIN SELECT RAISE(ABORT, 'evident store is append-only: jobs'); END;
CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts BEGIN SELECT RAISE(ABORT, 'evident store is append-only: attempts'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts BEGIN SELECT RAISE(ABORT, 'evident store is append-only: attempts'); END;
CREATE TRIGGER processes_no_update BEFORE UPDATE ON processes BEGIN SELECT RAISE(ABORT, 'evident store is append-only: processes'); END;
CREATE TRIGGER processes_no_delete BEFORE DELETE ON processes BEGIN SELECT RAISE(ABORT, 'evident store is append-only: processes'); END;
CREATE TRIGGER bindings_no_update BEFORE UPDATE ON bindings BEGIN SELECT RAISE(ABORT, 'evident store is append-only: bindings'); END;
CREATE TRIGGER bindings_no_delete BEFORE DELETE ON bindings BEGIN SELECT RAISE(ABORT, 'evident store is append-only: bindings'); END;
CREATE TRIGGER samples_no_update BEFORE UPDATE ON samples BEGIN SELECT RAISE(ABORT, 'evident store is append-only: samples'); END;
CREATE TRIGGER samples_no_delete BEFORE DELETE ON samples BEGIN SELECT RAISE(ABORT, 'evident store is append-only: samples'); END;
CREATE TRIGGER warmups_no_update BEFORE UPDATE ON warmups BEGIN SELECT RAISE(ABORT, 'evident store is append-only: warmups'); END;
CREATE TRIGGER warmups_no_delete BEFORE DELETE ON warmups BEGIN SELECT RAISE(ABORT, 'evident store is append-only: warmups'); END;
CREATE TRIGGER calibrations_no_update BEFORE UPDATE ON calibrations BEGIN SELECT RAISE(ABORT, 'evident store is append-only: calibrations'); END;
CREATE TRIGGER calibrations_no_delete BEFORE DELETE ON calibrations BEGIN SELECT RAISE(ABORT, 'evident store is append-only: calibrations'); END;
CREATE TRIGGER cold_timings_no_update BEFORE UPDATE ON cold_timings BEGIN SELECT RAISE(ABORT, 'evident store is append-only: cold_timings'); END;
CREATE TRIGGER cold_timings_no_delete BEFORE DELETE ON cold_timings BEGIN SELECT RAISE(ABORT, 'evident store is append-only: cold_timings'); END;
CREATE TRIGGER flushes_no_update BEFORE UPDATE ON flushes BEGIN SELECT RAISE(ABORT, 'evident store is append-only: flushes'); END;
CREATE TRIGGER flushes_no_delete BEFORE DELETE ON flushes BEGIN SELECT RAISE(ABORT, 'evident store is append-only: flushes'); END;
CREATE TRIGGER validations_no_update BEFORE UPDATE ON validations BEGIN SELECT RAISE(ABORT, 'evident store is append-only: validations'); END;
CREATE TRIGGER validations_no_delete BEFORE DELETE ON validations BEGIN SELECT RAISE(ABORT, 'evident store is append-only: validations'); END;
CREATE TRIGGER graph_nodes_no_update BEFORE UPDATE ON graph_nodes BEGIN SELECT RAISE(ABORT, 'evident store is append-only: graph_nodes'); END;
CREATE TRIGGER graph_nodes_no_delete BEFORE DELETE ON graph_nodes BEGIN SELECT RAISE(ABORT, 'evident store is append-only: graph_nodes'); END;
CREATE TRIGGER fits_no_update BEFORE UPDATE ON fits BEGIN SELECT RAISE(ABORT, 'evident store is append-only: fits'); END;
CREATE TRIGGER fits_no_delete BEFORE DELETE ON fits BEGIN SELECT RAISE(ABORT, 'evident store is append-only: fits'); END;
CREATE TRIGGER run_status_no_update BEFORE UPDATE ON run_status BEGIN SELECT RAISE(ABORT, 'evident store is append-only: run_status'); END;
CREATE TRIGGER run_status_no_delete BEFORE DELETE ON run_status BEGIN SELECT RAISE(ABORT, 'evident store is append-only: run_status'); END;

-- No row may be replaced either.  INSERT OR REPLACE (and REPLACE) deletes
-- the conflicting row first, and that deletion fires the DELETE triggers
-- above only when recursive_triggers is on -- which the store sets, but a
-- sqlite3 CLI session does not.  So every table also refuses, before the
-- insert, a row whose key (primary key or any UNIQUE key) already exists:
-- a duplicate can never reach the conflict-resolution step that would
-- delete the old row.
CREATE TRIGGER runs_no_replace BEFORE INSERT ON runs WHEN EXISTS (SELECT 1 FROM runs WHERE run_id = NEW.run_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: runs row exists'); END;
CREATE TRIGGER invocations_no_replace BEFORE INSERT ON invocations WHEN EXISTS (SELECT 1 FROM invocations WHERE invocation_id = NEW.invocation_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: invocations row exists'); END;
CREATE TRIGGER sources_no_replace BEFORE INSERT ON sources WHEN EXISTS (SELECT 1 FROM sources WHERE run_id = NEW.run_id AND path = NEW.path) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: sources row exists'); END;
CREATE TRIGGER environments_no_replace BEFORE INSERT ON environments WHEN EXISTS (SELECT 1 FROM environments WHERE invocation_id = NEW.invocation_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: environments row exists'); END;
CREATE TRIGGER cases_no_replace BEFORE INSERT ON cases WHEN EXISTS (SELECT 1 FROM cases WHERE run_id = NEW.run_id AND case_index = NEW.case_index) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: cases row exists'); END;
CREATE TRIGGER jobs_no_replace BEFORE INSERT ON jobs WHEN EXISTS (SELECT 1 FROM jobs WHERE job_id = NEW.job_id) OR EXISTS (SELECT 1 FROM jobs WHERE run_id = NEW.run_id AND job_key = NEW.job_key) OR EXISTS (SELECT 1 FROM jobs WHERE run_id = NEW.run_id AND phase = NEW.phase AND plan_order = NEW.plan_order) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: jobs row exists'); END;
CREATE TRIGGER attempts_no_replace BEFORE INSERT ON attempts WHEN EXISTS (SELECT 1 FROM attempts WHERE attempt_id = NEW.attempt_id) OR EXISTS (SELECT 1 FROM attempts WHERE job_id = NEW.job_id AND attempt = NEW.attempt) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: attempts row exists'); END;
CREATE TRIGGER processes_no_replace BEFORE INSERT ON processes WHEN EXISTS (SELECT 1 FROM processes WHERE attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: processes row exists'); END;
CREATE TRIGGER bindings_no_replace BEFORE INSERT ON bindings WHEN EXISTS (SELECT 1 FROM bindings WHERE attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: bindings row exists'); END;
CREATE TRIGGER samples_no_replace BEFORE INSERT ON samples WHEN EXISTS (SELECT 1 FROM samples WHERE attempt_id = NEW.attempt_id AND timing = NEW.timing AND sample_index = NEW.sample_index) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: samples row exists'); END;
CREATE TRIGGER warmups_no_replace BEFORE INSERT ON warmups WHEN EXISTS (SELECT 1 FROM warmups WHERE attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: warmups row exists'); END;
CREATE TRIGGER calibrations_no_replace BEFORE INSERT ON calibrations WHEN EXISTS (SELECT 1 FROM calibrations WHERE attempt_id = NEW.attempt_id AND step = NEW.step) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: calibrations row exists'); END;
CREATE TRIGGER cold_timings_no_replace BEFORE INSERT ON cold_timings WHEN EXISTS (SELECT 1 FROM cold_timings WHERE attempt_id = NEW.attempt_id AND name = NEW.name) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: cold_timings row exists'); END;
CREATE TRIGGER flushes_no_replace BEFORE INSERT ON flushes WHEN EXISTS (SELECT 1 FROM flushes WHERE attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: flushes row exists'); END;
CREATE TRIGGER validations_no_replace BEFORE INSERT ON validations WHEN EXISTS (SELECT 1 FROM validations WHERE attempt_id = NEW.attempt_id AND stage = NEW.stage) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: validations row exists'); END;
CREATE TRIGGER graph_nodes_no_replace BEFORE INSERT ON graph_nodes WHEN EXISTS (SELECT 1 FROM graph_nodes WHERE attempt_id = NEW.attempt_id AND node_index = NEW.node_index) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: graph_nodes row exists'); END;
CREATE TRIGGER fits_no_replace BEFORE INSERT ON fits WHEN EXISTS (SELECT 1 FROM fits WHERE fit_id = NEW.fit_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: fits row exists'); END;
CREATE TRIGGER run_status_no_replace BEFORE INSERT ON run_status WHEN EXISTS (SELECT 1 FROM run_status WHERE run_id = NEW.run_id) BEGIN SELECT RAISE(ABORT, 'evident store is append-only: run_status row exists'); END;

-- Views for the sqlite3 CLI.
-- The last attempt of each job.
CREATE VIEW last_attempts AS
    SELECT a.* FROM attempts a
    WHERE a.attempt = (SELECT MAX(b.attempt) FROM attempts b WHERE b.job_id = a.job_id);

-- Outcome of each attempt, derived from its process record exactly as
-- src/store/outcome.c derives it (that code is the reference).
CREATE VIEW attempt_outcomes AS
    SELECT a.attempt_id, a.job_id, a.attempt,
      CASE
        WHEN p.attempt_id IS NULL OR p.interrupted = 1 THEN 'interrupted'
        WHEN p.skipped = 1 AND p.exit_code = 0 THEN 'skipped'
        WHEN p.timed_out = 1 THEN 'failed-timeout'
        WHEN p.signal IS NOT NULL THEN 'failed-signal'
        WHEN p.exit_code <> 0 THEN 'failed-exit'
        WHEN p.records_ok = 0 THEN 'failed-protocol'
        WHEN EXISTS (SELECT 1 FROM validations v WHERE v.attempt_id = a.attempt_id AND v.passed = 0) THEN 'failed-validation'
        ELSE 'completed'
      END AS outcome
    FROM attempts a LEFT JOIN processes p ON p.attempt_id = a.attempt_id;

CREATE VIEW job_outcomes AS
    SELECT j.run_id, j.job_id, j.job_key, j.phase, j.case_index, j.arm, j.label, o.attempt, o.outcome
    FROM jobs j JOIN last_attempts la ON la.job_id = j.job_id
    JOIN attempt_outcomes o ON o.attempt_id = la.attempt_id;

CREATE VIEW failures AS
    SELECT * FROM job_outcomes WHERE outcome NOT IN ('completed');

-- Hot per-op times of every sample: per_op_us = elapsed_ms*1000/(replays*ops_per_graph).
CREATE VIEW sample_times AS
    SELECT j.run_id, j.job_id, j.job_key, j.phase, j.case_index, j.arm, j.label,
           s.attempt_id, s.timing, s.sample_index, s.replays, s.ops_per_graph, s.elapsed_ms,
           s.elapsed_ms * 1000.0 / (s.replays * s.ops_per_graph) AS per_op_us
    FROM samples s JOIN attempts a ON a.attempt_id = s.attempt_id JOIN jobs j ON j.job_id = a.job_id;

-- Sample counts per completed job (the median itself is computed in C:
-- src/common/stats.c; SQLite has no median).
CREATE VIEW hot_sample_counts AS
    SELECT jo.run_id, jo.job_key, jo.phase, jo.case_index, jo.arm, COUNT(*) AS n,
           MIN(st.per_op_us) AS min_us, MAX(st.per_op_us) AS max_us
    FROM job_outcomes jo JOIN last_attempts la ON la.job_id = jo.job_id
    JOIN sample_times st ON st.attempt_id = la.attempt_id AND st.timing = 'hot'
    WHERE jo.outcome = 'completed'
    GROUP BY jo.job_id;
