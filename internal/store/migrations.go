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
}
