package result

// RoundApp holds app-fitness results (internal/appfit): one result per
// filesystem semantic ("appfit:NAME", its outcome in LabelCheckOutcome and
// what was seen in LabelCheckReason) and one per SQLite mode
// ("sqlite:JOURNAL-SYNCHRONOUS", commits as write IOPS, commit times as
// write completion latency).
const RoundApp = "app"

// Labels of app-fitness results.
const (
	// LabelCheckEvidence is the observations behind a semantic's outcome,
	// one per line.
	LabelCheckEvidence LabelKey = "check_evidence"
	// LabelAppClients says where the clients ran ("two processes on this
	// host", "one client on node-a, one on node-b").
	LabelAppClients LabelKey = "app_clients"
	// LabelSQLiteJournal and LabelSQLiteSynchronous are a SQLite result's
	// journal_mode and synchronous pragmas.
	LabelSQLiteJournal     LabelKey = "sqlite_journal"
	LabelSQLiteSynchronous LabelKey = "sqlite_synchronous"
	// LabelSQLiteClients counts the clients that committed at once.
	LabelSQLiteClients LabelKey = "sqlite_clients"
	// LabelFlushesPerCommit is the disk's flush requests per commit
	// (absent when the disk does not count them or there is no disk).
	LabelFlushesPerCommit LabelKey = "disk_flushes_per_commit"
	// LabelSQLiteIntegrity is PRAGMA integrity_check's answer after the
	// clients finished, with the committed rows it lacks if any.
	LabelSQLiteIntegrity LabelKey = "sqlite_integrity"
)
