package result

import "time"

// Leftover is one thing a run left on a target of a registered kind (an
// RBD image, a directory in a Gluster volume), as the kind found it.
type Leftover struct {
	// Kind names the kind that found it.
	Kind string `json:"kind"`
	// Where is the target string it was found under.
	Where string `json:"where"`
	// Name is what is left, in the kind's terms (rbd:bench/storbench-r1).
	Name  string `json:"name"`
	RunID string `json:"run_id"`
	// Created is when it was made; zero when unknown.
	Created time.Time `json:"created,omitzero"`
	// Detail says what it is ("image, 2 GiB").
	Detail string `json:"detail,omitempty"`
	// Removed says it was removed; Error why removing it failed.
	Removed bool   `json:"removed,omitempty"`
	Error   string `json:"error,omitempty"`
}

// KindCleanup is what a cleanup of registered kinds' targets found and
// removed, target by target.
type KindCleanup struct {
	DryRun  bool                `json:"dry_run"`
	Targets []KindCleanupTarget `json:"targets"`
}

// KindCleanupTarget is one target named: what was left there, or why it
// could not be looked at.
type KindCleanupTarget struct {
	Target    string     `json:"target"`
	Error     string     `json:"error,omitempty"`
	Leftovers []Leftover `json:"leftovers"`
}
