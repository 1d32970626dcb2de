package ceph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Holding an OSD down through Ceph's own API, no node access needed:
// `ceph osd add-noup osd.N` then `ceph osd down osd.N` keeps the OSD
// process running but out of the map's up set (its PGs go degraded and
// clients redirect to the other copies); `ceph osd rm-noup osd.N` lets it
// boot again. Before acting, storbench records the hold in Ceph's own
// config-key store under HeldDownPrefix, so that a run killed outright
// leaves a record that FindHeldDown finds and Release undoes.

// HeldDownPrefix starts the config-key of every hold storbench records.
const HeldDownPrefix = "storbench/osd-held-down/"

// HeldDown is storbench's record of an OSD it holds down.
type HeldDown struct {
	OSD   int       `json:"osd"`
	RunID string    `json:"run_id"`
	Since time.Time `json:"since"`
	// StoppedWith, when set, is the user's command that stopped the OSD
	// (no noup flag): starting it again is the user's command, never one
	// read from this record.
	StoppedWith string `json:"stopped_with,omitempty"`
}

// Key is the config-key the hold is recorded under.
func (h HeldDown) Key() string { return HeldDownPrefix + h.RunID + "/osd." + strconv.Itoa(h.OSD) }

func (h HeldDown) String() string {
	how := "held down (noup)"
	if h.StoppedWith != "" {
		how = fmt.Sprintf("stopped with %q", h.StoppedWith)
	}
	return fmt.Sprintf("osd.%d %s by run %s since %s", h.OSD, how, h.RunID, h.Since.UTC().Format(time.RFC3339))
}

// Run runs `ceph ARGS...` for a command that changes something and returns
// its combined output.
func (c Client) Run(ctx context.Context, args ...string) (string, error) {
	full := c.args(args...)
	var out bytes.Buffer
	if err := c.Cmder.Command(ctx, "ceph", full...).SetStdout(&out).SetStderr(&out).Run(); err != nil {
		return out.String(), fmt.Errorf("ceph %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// HoldDown records the hold, then sets the OSD's noup flag and marks it
// down; it returns when the down command was sent. The record is written
// first: a run killed between the steps leaves a record of a change it
// may have made. (Ceph 16.2 accepts add-noup for an OSD that does not
// exist, exit 0: the caller checks the OSD.)
func (c Client) HoldDown(ctx context.Context, h HeldDown) (time.Time, error) {
	if err := c.Record(ctx, h); err != nil {
		return time.Time{}, err
	}
	id := "osd." + strconv.Itoa(h.OSD)
	if _, err := c.Run(ctx, "osd", "add-noup", id); err != nil {
		return time.Time{}, err
	}
	sent := time.Now()
	_, err := c.Run(ctx, "osd", "down", id)
	return sent, err
}

// Record keeps the hold in Ceph's config-key store, before it is made.
func (c Client) Record(ctx context.Context, h HeldDown) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if _, err := c.Run(ctx, "config-key", "set", h.Key(), string(b)); err != nil {
		return fmt.Errorf("recording that run %s takes osd.%d down: %w", h.RunID, h.OSD, err)
	}
	return nil
}

// Release clears the OSD's noup flag (the OSD boots again by itself) and
// then removes the record; a release that fails keeps the record.
func (c Client) Release(ctx context.Context, h HeldDown) error {
	if _, err := c.Run(ctx, "osd", "rm-noup", "osd."+strconv.Itoa(h.OSD)); err != nil {
		return fmt.Errorf("releasing %s: %w", h, err)
	}
	if _, err := c.Run(ctx, "config-key", "rm", h.Key()); err != nil {
		return fmt.Errorf("removing the record of %s: %w", h, err)
	}
	return nil
}

// FindHeldDown lists the holds storbench recorded, of one run or, with
// runID "", of every run.
func (c Client) FindHeldDown(ctx context.Context, runID string) ([]HeldDown, error) {
	b, err := c.JSON(ctx, "config-key", "ls")
	if err != nil {
		return nil, err
	}
	keys, err := HeldDownKeys(b, runID)
	if err != nil {
		return nil, err
	}
	var out []HeldDown
	for _, k := range keys {
		var v bytes.Buffer
		full := c.args("config-key", "get", k)
		if err := c.Cmder.Command(ctx, "ceph", full...).SetStdout(&v).Run(); err != nil {
			return out, fmt.Errorf("ceph config-key get %s: %w", k, err)
		}
		var h HeldDown
		if err := json.Unmarshal(v.Bytes(), &h); err != nil {
			return out, fmt.Errorf("config-key %s: %w", k, err)
		}
		out = append(out, h)
	}
	return out, nil
}

// HeldDownKeys picks storbench's hold records out of `ceph config-key ls
// -f json`, of one run or, with runID "", of every run.
func HeldDownKeys(b []byte, runID string) ([]string, error) {
	var keys []string
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("parsing ceph config-key ls: %w", err)
	}
	var out []string
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, HeldDownPrefix)
		if ok && (runID == "" || strings.HasPrefix(rest, runID+"/")) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// OSDState is one OSD as the OSD map says (`ceph osd dump`).
type OSDState struct {
	ID    int
	Up    bool
	In    bool
	State []string // "exists", "up", "noup", ...
}

// NoUp reports whether the OSD carries the noup flag.
func (s OSDState) NoUp() bool {
	for _, f := range s.State {
		if f == "noup" {
			return true
		}
	}
	return false
}

// OSDMap is the part of `ceph osd dump -f json` the failure check reads.
type OSDMap struct {
	Epoch int
	Flags string // cluster-wide: "sortbitwise,recovery_deletes,..."
	OSDs  []OSDState
}

// ParseOSDDump reads `ceph osd dump -f json`.
func ParseOSDDump(b []byte) (OSDMap, error) {
	var raw struct {
		Epoch int    `json:"epoch"`
		Flags string `json:"flags"`
		OSDs  []struct {
			OSD   int      `json:"osd"`
			Up    int      `json:"up"`
			In    int      `json:"in"`
			State []string `json:"state"`
		} `json:"osds"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return OSDMap{}, fmt.Errorf("parsing ceph osd dump: %w", err)
	}
	m := OSDMap{Epoch: raw.Epoch, Flags: raw.Flags}
	for _, o := range raw.OSDs {
		m.OSDs = append(m.OSDs, OSDState{ID: o.OSD, Up: o.Up == 1, In: o.In == 1, State: o.State})
	}
	sort.Slice(m.OSDs, func(i, j int) bool { return m.OSDs[i].ID < m.OSDs[j].ID })
	return m, nil
}

// OSDMap reads `ceph osd dump`.
func (c Client) OSDMap(ctx context.Context) (OSDMap, error) {
	b, err := c.JSON(ctx, "osd", "dump")
	if err != nil {
		return OSDMap{}, err
	}
	return ParseOSDDump(b)
}

// PGStat is `ceph pg stat`: how many PGs, in which states.
type PGStat struct {
	Total int
	// ByState counts PGs per state name ("active+clean",
	// "active+undersized+degraded", ...).
	ByState map[string]int
}

// Clean reports whether every PG is active+clean.
func (s PGStat) Clean() bool { return s.Total > 0 && s.ByState["active+clean"] == s.Total }

// Degraded counts the PGs whose state says degraded or undersized.
func (s PGStat) Degraded() int {
	n := 0
	for st, c := range s.ByState {
		if strings.Contains(st, "degraded") || strings.Contains(st, "undersized") {
			n += c
		}
	}
	return n
}

func (s PGStat) String() string {
	var parts []string
	for st, c := range s.ByState {
		parts = append(parts, fmt.Sprintf("%d %s", c, st))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d PGs: %s", s.Total, strings.Join(parts, ", "))
}

// ParsePGStat reads `ceph pg stat -f json` (Pacific nests the summary
// under pg_summary).
func ParsePGStat(b []byte) (PGStat, error) {
	type summary struct {
		ByState []struct {
			Name string `json:"name"`
			Num  int    `json:"num"`
		} `json:"num_pg_by_state"`
		NumPGs int `json:"num_pgs"`
	}
	var raw struct {
		summary
		PGSummary *summary `json:"pg_summary"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return PGStat{}, fmt.Errorf("parsing ceph pg stat: %w", err)
	}
	s := raw.summary
	if raw.PGSummary != nil {
		s = *raw.PGSummary
	}
	out := PGStat{Total: s.NumPGs, ByState: map[string]int{}}
	for _, st := range s.ByState {
		out.ByState[st.Name] += st.Num
	}
	return out, nil
}

// PGStat reads `ceph pg stat`.
func (c Client) PGStat(ctx context.Context) (PGStat, error) {
	b, err := c.JSON(ctx, "pg", "stat")
	if err != nil {
		return PGStat{}, err
	}
	return ParsePGStat(b)
}

// Health is `ceph health`: its status and the checks raised.
type Health struct {
	Status string   // HEALTH_OK, HEALTH_WARN, HEALTH_ERR
	Checks []string // "OSD_DOWN: 1 osds down", sorted
}

// ParseHealth reads `ceph health -f json`.
func ParseHealth(b []byte) (Health, error) {
	var raw struct {
		Status string `json:"status"`
		Checks map[string]struct {
			Summary struct {
				Message string `json:"message"`
			} `json:"summary"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Health{}, fmt.Errorf("parsing ceph health: %w", err)
	}
	h := Health{Status: raw.Status}
	for name, c := range raw.Checks {
		h.Checks = append(h.Checks, name+": "+c.Summary.Message)
	}
	sort.Strings(h.Checks)
	return h, nil
}

// Health reads `ceph health`.
func (c Client) Health(ctx context.Context) (Health, error) {
	b, err := c.JSON(ctx, "health")
	if err != nil {
		return Health{}, err
	}
	return ParseHealth(b)
}
