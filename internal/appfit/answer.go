// Package appfit measures what the apps people keep on a volume rely on:
// POSIX (fcntl) and flock locks shared between two clients, O_DIRECT,
// rename atomic to a reader, fsync reaching the disk, mmap writes visible
// after msync, and a real SQLite database's commits. Two clients are two
// processes (storbench's own hidden appfit-probe command, on one host, in
// one pod or on two nodes) that coordinate through files in the directory
// probed, so nothing but the volume connects them.
package appfit

import "time"

// Outcome is a semantic's answer.
type Outcome string

// The outcomes. NotApplicable is for a semantic that cannot be judged
// here (no block device to count an fsync's writes on), never a failure.
const (
	Works         Outcome = "works"
	Broken        Outcome = "broken"
	NotApplicable Outcome = "not applicable"
)

// Semantic names, as stored (workload "appfit:NAME").
const (
	FcntlLock     = "fcntl-lock"
	Flock         = "flock"
	ODirect       = "o-direct"
	RenameAtomic  = "rename-atomic"
	FsyncReadBack = "fsync-read-back"
	MmapMsync     = "mmap-msync"
)

// Semantics lists every semantic in the order they are probed.
var Semantics = []string{FcntlLock, Flock, ODirect, RenameAtomic, FsyncReadBack, MmapMsync}

// Answer is one semantic's outcome with what was seen.
type Answer struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// Seen is the finding in a sentence ("both clients held the same
	// write lock", "412 reads during 300 renames, each whole").
	Seen string `json:"seen"`
	// Evidence is the raw observations behind Seen, one per line.
	Evidence []string      `json:"evidence,omitempty"`
	Took     time.Duration `json:"took_ns"`
}

// Report is one probe of a directory by two clients.
type Report struct {
	Dir string `json:"dir"`
	// Clients says where the two clients ran ("one host, two processes",
	// "pods on node-a and node-b").
	Clients string   `json:"clients"`
	Answers []Answer `json:"answers"`
}

// Answer returns the named answer, or nil.
func (r *Report) Answer(name string) *Answer {
	for i := range r.Answers {
		if r.Answers[i].Name == name {
			return &r.Answers[i]
		}
	}
	return nil
}
