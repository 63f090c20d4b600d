-- evident store: views for the questions a user asks first, for the
-- sqlite3 CLI.  They are TEMP views: they live in the session that reads
-- this file and are never written into the store, so a committed
-- evidence.db (and its receipts) stays byte for byte what the run wrote,
-- and db/schema.sql (part of the measurement closure) is unchanged.
--
--   sqlite3 -cmd '.read db/views.sql' receipts/h200/evidence.db
--
-- They stand on schema.sql's views (job_outcomes, last_attempts,
-- sample_times).  The medians equal validation.json's to the bit (the
-- same per_op_us expression and ev_median's a + (b - a) / 2);
-- tests/check_results.c holds them to it on a real run.  The reasons
-- mirror rp_failure_reason (src/evidence/report.c), which is the
-- reference, as attempt_outcomes mirrors src/store/outcome.c.  docs/store.md
-- has example queries.

-- The hot median of every completed job's last attempt, with its case.
CREATE TEMP VIEW IF NOT EXISTS job_hot_medians AS
    WITH hot AS (
        SELECT jo.run_id, jo.job_id, jo.job_key, jo.phase, jo.case_index, jo.arm, jo.label, st.per_op_us,
               ROW_NUMBER() OVER (PARTITION BY jo.job_id ORDER BY st.per_op_us) AS k,
               COUNT(*) OVER (PARTITION BY jo.job_id) AS n
        FROM job_outcomes jo
        JOIN last_attempts la ON la.job_id = jo.job_id
        JOIN sample_times st ON st.attempt_id = la.attempt_id AND st.timing = 'hot'
        WHERE jo.outcome = 'completed'
    )
    SELECT h.run_id, h.job_id, h.job_key, h.phase, h.case_index, c.op, c.rows, c.cols, c.stride, c.dtype,
           c.default_rows, c.role, h.arm, h.label, h.n AS hot_samples,
           CASE WHEN h.n % 2 = 1
                THEN MAX(CASE WHEN h.k = (h.n + 1) / 2 THEN h.per_op_us END)
                ELSE MAX(CASE WHEN h.k = h.n / 2 THEN h.per_op_us END)
                     + (MAX(CASE WHEN h.k = h.n / 2 + 1 THEN h.per_op_us END)
                        - MAX(CASE WHEN h.k = h.n / 2 THEN h.per_op_us END)) / 2
           END AS median_us
    FROM hot h LEFT JOIN cases c ON c.run_id = h.run_id AND c.case_index = h.case_index
    GROUP BY h.job_id;

-- Per case and arm (main and policy jobs, no retries): the rounds that
-- completed and the estimate over them, the geometric mean of their
-- medians (with one round, the median).  The geometric mean here is
-- computed by SQLite's exp/ln, so it may differ from validation.json's in
-- the last bits; `evident results` gives the exact figure.
CREATE TEMP VIEW IF NOT EXISTS case_arm_medians AS
    SELECT m.run_id, m.case_index, m.op, m.rows, m.cols, m.stride, m.dtype, m.default_rows, m.role, m.arm,
           COUNT(*) AS rounds_completed,
           CASE WHEN COUNT(*) = 1 THEN MIN(m.median_us) ELSE exp(avg(ln(m.median_us))) END AS estimate_us,
           MIN(m.median_us) AS min_round_us, MAX(m.median_us) AS max_round_us
    FROM job_hot_medians m JOIN jobs j ON j.job_id = m.job_id
    WHERE m.case_index IS NOT NULL AND j.retry_of IS NULL AND m.phase IN ('main', 'policy')
    GROUP BY m.run_id, m.case_index, m.arm;

-- Every job that did not complete, with why (from its last attempt's
-- process record) and what its rescue did.
CREATE TEMP VIEW IF NOT EXISTS failure_reasons AS
    SELECT jo.run_id, jo.job_id, jo.job_key, jo.phase, jo.case_index, jo.arm, jo.label, jo.attempt,
           jo.outcome,
           CASE
             WHEN p.attempt_id IS NULL THEN 'no process record'
             WHEN jo.outcome = 'skipped' THEN COALESCE(p.skip_reason, 'skipped')
             WHEN p.timed_out = 1 THEN 'watchdog timeout'
             WHEN p.signal IS NOT NULL THEN 'signal ' || p.signal
             WHEN p.exit_code IS NOT NULL AND p.exit_code <> 0 THEN 'exit code ' || p.exit_code
             WHEN p.protocol_error IS NOT NULL THEN p.protocol_error
             WHEN jo.outcome = 'failed-validation' THEN
               'output does not match the oracle ('
               || (SELECT SUM(v.mismatches) FROM validations v
                   WHERE v.attempt_id = la.attempt_id AND v.passed = 0) || ' mismatches)'
             WHEN p.interrupted = 1 THEN 'interrupted'
             ELSE '-'
           END AS reason,
           (SELECT r.outcome FROM job_outcomes r JOIN jobs rj ON rj.job_id = r.job_id
            WHERE rj.retry_of = jo.job_id) AS retry_outcome,
           p.stderr_tail
    FROM job_outcomes jo
    JOIN last_attempts la ON la.job_id = jo.job_id
    LEFT JOIN processes p ON p.attempt_id = la.attempt_id
    WHERE jo.outcome <> 'completed';
