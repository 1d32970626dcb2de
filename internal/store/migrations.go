package store

// migrations[i] brings the schema from version i to i+1 (PRAGMA
// user_version). Append only: never edit a migration that has shipped.
var migrations = []string{
	// 1: runs, results, raw fio output.
	`CREATE TABLE runs (
		id          TEXT PRIMARY KEY,
		suite       TEXT NOT NULL,
		source      TEXT NOT NULL DEFAULT 'storbench',
		status      TEXT NOT NULL,
		started_ns  INTEGER NOT NULL,
		finished_ns INTEGER NOT NULL DEFAULT 0,
		labels      TEXT NOT NULL DEFAULT '{}',
		workloads   TEXT NOT NULL DEFAULT '[]',
		targets     TEXT NOT NULL DEFAULT '[]',
		note        TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_started ON runs(started_ns);
	CREATE TABLE results (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		target      TEXT NOT NULL,
		round       TEXT NOT NULL DEFAULT 'isolated',
		repetition  INTEGER NOT NULL DEFAULT 1,
		workload    TEXT NOT NULL,
		status      TEXT NOT NULL,
		error       TEXT NOT NULL DEFAULT '',
		started_ns  INTEGER NOT NULL DEFAULT 0,
		finished_ns INTEGER NOT NULL DEFAULT 0,
		method      TEXT NOT NULL DEFAULT '',
		labels      TEXT NOT NULL DEFAULT '{}',
		data        TEXT NOT NULL DEFAULT '{}'
	);
	CREATE INDEX results_run ON results(run_id);
	CREATE TABLE raw_outputs (
		result_id INTEGER PRIMARY KEY REFERENCES results(id) ON DELETE CASCADE,
		encoding  TEXT NOT NULL,
		body      BLOB NOT NULL
	);`,
	// 2: provenance of imported files (one row per input file, keyed by its
	// SHA-256 so the same file is never imported twice) and SMART health.
	`CREATE TABLE imports (
		sha256       TEXT PRIMARY KEY,
		run_id       TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		file         TEXT NOT NULL,
		format       TEXT NOT NULL,
		tool         TEXT NOT NULL DEFAULT '',
		tool_version TEXT NOT NULL DEFAULT '',
		size_bytes   INTEGER NOT NULL DEFAULT 0,
		results      INTEGER NOT NULL DEFAULT 0,
		imported_ns  INTEGER NOT NULL
	);
	CREATE INDEX imports_run ON imports(run_id);
	CREATE TABLE device_health (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		target      TEXT NOT NULL,
		captured_ns INTEGER NOT NULL DEFAULT 0,
		healthy     INTEGER NOT NULL,
		data        TEXT NOT NULL
	);
	CREATE INDEX device_health_target ON device_health(target);`,
	// 3: a compact copy of each result for analyses over many results:
	// its identity and labels, and every metric precomputed, so compare and
	// report read a hundred bytes or so per result instead of decoding latency
	// distributions. figures packs the metrics as little-endian float64 in
	// the order of store.figureMetrics (NaN: not held); the bottleneck is
	// copied too. Results stored before this version have no row; readers
	// derive their figures from results.data instead.
	`CREATE TABLE result_figures (
		result_id  INTEGER PRIMARY KEY REFERENCES results(id) ON DELETE CASCADE,
		run_id     TEXT NOT NULL,
		target     TEXT NOT NULL,
		round      TEXT NOT NULL,
		repetition INTEGER NOT NULL,
		workload   TEXT NOT NULL,
		status     TEXT NOT NULL,
		method     TEXT NOT NULL DEFAULT '',
		labels     TEXT NOT NULL DEFAULT '{}',
		figures    BLOB NOT NULL,
		limited_by TEXT NOT NULL DEFAULT '',
		evidence   TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX result_figures_run ON result_figures(run_id);`,
	// 4: the storbench process running a run (pid, its start time in clock
	// ticks after boot, the boot ID and the host), so that a run left
	// "running" by a process that is gone can be told abandoned.
	`ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN proc_start INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';`,
	// 5: indexes for the dashboard and the history of a target: runs by
	// status or suite in time order, results by target and workload (the
	// runs list's target filter; History, a target x workload over
	// time, reads both tables), and
	// which runs hold results carrying each label (the label filter),
	// filled from the results stored so far.
	`CREATE INDEX runs_status_started ON runs(status, started_ns);
	CREATE INDEX runs_suite_started ON runs(suite, started_ns);
	CREATE INDEX result_figures_target ON result_figures(target, workload, run_id);
	CREATE INDEX results_target ON results(target, workload, round, status, started_ns, run_id);
	CREATE TABLE result_labels (
		key    TEXT NOT NULL,
		value  TEXT NOT NULL,
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		PRIMARY KEY (key, value, run_id)
	) WITHOUT ROWID;
	CREATE INDEX result_labels_run ON result_labels(run_id);
	INSERT OR IGNORE INTO result_labels(key, value, run_id) SELECT j.key, j.value, r.run_id FROM results r, json_each(r.labels) j;`,
}
