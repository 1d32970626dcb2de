package analysis

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// Status is a verdict's outcome. Info is neither good nor bad news.
type Status string

const (
	Pass Status = "pass"
	Info Status = "info"
	Warn Status = "warn"
	Fail Status = "fail"
)

func (s Status) rank() int {
	switch s {
	case Warn:
		return 2
	case Fail:
		return 3
	case Info:
		return 1
	}
	return 0
}

// Worse returns the worse of two statuses.
func Worse(a, b Status) Status {
	if a == "" || b.rank() > a.rank() {
		return b
	}
	return a
}

// Verdict answers "is this storage fit for X?" for every target or group.
type Verdict struct {
	For     string  `json:"for"`
	Status  Status  `json:"status"`
	Summary string  `json:"summary"`
	Checks  []Check `json:"checks"`
	// Advice lists recommendations that are not pass/fail, such as block.db
	// sizing.
	Advice []string `json:"advice,omitempty"`
}

// Check is one judged figure: what was measured, against which threshold,
// and where that threshold comes from.
type Check struct {
	// Subject is the target or group judged.
	Subject  string `json:"subject"`
	Name     string `json:"name"`
	Workload string `json:"workload,omitempty"`
	Round    string `json:"round,omitempty"`
	// Value is in Unit (a base unit, or "score").
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Display is Value as people read it ("4.21 ms", "812 IOPS").
	Display   string `json:"display"`
	Status    Status `json:"status"`
	Threshold string `json:"threshold"`
	Source    string `json:"source"`
	// Detail says what the figure means (a device class, the sum behind a
	// score, the numbers behind advice).
	Detail string `json:"detail,omitempty"`
}

// Verdict kinds.
const (
	ForEtcd    = "etcd"
	ForCephOSD = "ceph-osd"
	ForPiScore = "pi-score"
	ForGeneral = "general"
)

// Kinds lists the verdicts qualify knows.
var Kinds = []string{ForEtcd, ForCephOSD, ForPiScore, ForGeneral, ForSQLite}

// Suite returns the built-in suite a verdict needs.
func Suite(kind string) string {
	switch kind {
	case ForEtcd:
		return "etcd"
	case ForCephOSD:
		return "ceph-osd"
	case ForPiScore:
		return "pi"
	case ForSQLite:
		return "appfit"
	}
	return "standard"
}

// VerdictOptions carry what a verdict needs beyond the figures.
type VerdictOptions struct {
	// DeviceBytes is the size of each target's device (by target), for
	// Ceph block.db sizing. Missing sizes give the rule without figures.
	DeviceBytes map[string]int64
}

// MissingError says which measurements a verdict needs and lacks.
type MissingError struct {
	For  string
	What string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s verdict: %s: run the %s suite (storbench qualify --for %s --target PATH)", e.For, e.What, Suite(e.For), e.For)
}

// ErrUnknownVerdict is returned for a kind not in Kinds.
var ErrUnknownVerdict = errors.New("unknown verdict")

// VerdictFor computes the verdict of one kind over a comparison.
func VerdictFor(kind string, c *Comparison, opts VerdictOptions) (*Verdict, error) {
	var v *Verdict
	var err error
	switch kind {
	case ForEtcd:
		v, err = etcdVerdict(c)
	case ForCephOSD:
		v, err = cephVerdict(c, opts)
	case ForPiScore:
		v, err = piVerdict(c)
	case ForGeneral:
		v, err = generalVerdict(c)
	case ForSQLite: // judged from app-fitness results: SQLiteVerdict
		return nil, &MissingError{For: ForSQLite, What: "app-fitness results, which a comparison does not hold"}
	default:
		return nil, fmt.Errorf("%w %q: choose one of %s", ErrUnknownVerdict, kind, strings.Join(Kinds, ", "))
	}
	if err != nil {
		return nil, err
	}
	v.For = kind
	if v.Status == "" {
		for _, ch := range v.Checks {
			v.Status = Worse(v.Status, ch.Status)
		}
	}
	// Information beside passed checks is a pass; a verdict made only of
	// information (a score) stays informational. Neither fails a script.
	if v.Status == Info {
		for _, ch := range v.Checks {
			if ch.Status == Pass {
				v.Status = Pass
			}
		}
	}
	return v, nil
}

// Verdicts judges a comparison once per kind; no kinds: every verdict it
// holds the data for (Applicable).
func Verdicts(c *Comparison, kinds []string) ([]*Verdict, error) {
	if len(kinds) == 0 {
		kinds = Applicable(c)
	}
	var out []*Verdict
	for _, k := range kinds {
		v, err := VerdictFor(k, c, VerdictOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Applicable lists the verdicts the comparison holds enough data for, in
// Kinds order; general always applies.
func Applicable(c *Comparison) []string {
	var out []string
	for _, k := range Kinds {
		if _, err := VerdictFor(k, c, VerdictOptions{}); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// subjects are the (target, round) pairs verdicts judge: per target, since
// a verdict is about one device. The round is named only when several.
type subject struct{ target, round, label string }

func (c *Comparison) subjects() []subject {
	var out []subject
	for _, t := range c.Targets {
		for _, r := range c.Rounds {
			label := t
			if len(c.Rounds) > 1 {
				label += " (" + r + ")"
			}
			out = append(out, subject{t, r, label})
		}
	}
	return out
}

// find returns the first workload (preferred names first, then any whose
// name matches) holding metric for a target and round.
func (c *Comparison) find(target, round, metric string, preferred []string, match func(pattern) bool) (Cell, bool) {
	for _, w := range preferred {
		if cell, ok := c.TargetCell(target, round, w, metric); ok {
			return cell, true
		}
	}
	if match == nil {
		return Cell{}, false
	}
	for _, w := range c.Workloads {
		if match(patternOf(w)) {
			if cell, ok := c.TargetCell(target, round, w, metric); ok {
				return cell, true
			}
		}
	}
	return Cell{}, false
}

const (
	etcdSyncPass = 10 * time.Millisecond
	etcdSyncWarn = 20 * time.Millisecond
	// Sources stated with every etcd check.
	etcdSyncSource = "etcd documentation: the p99 of wal_fsync_duration_seconds should be below 10 ms (applied to fio in 'Using fio to tell " +
		"whether your storage is fast enough for etcd', IBM Cloud blog, 2019; OpenShift's etcd-perf check uses the same 10 ms, " +
		"docs.redhat.com 'Recommended etcd practices'); 10-20 ms is the tolerance band OpenShift-oriented guidance allows before etcd misbehaves"
	etcdIOPSSource = "etcd hardware guide: 50 sequential IOPS typical, 500 for heavily loaded clusters (etcd.io/docs/v3.5/op-guide/hardware/#disks)"
)

func etcdVerdict(c *Comparison) (*Verdict, error) {
	v := &Verdict{}
	judged := 0
	for _, s := range c.subjects() {
		cell, ok := c.find(s.target, s.round, result.MetricSyncP99, []string{"etcd-fdatasync"}, func(pattern) bool { return true })
		if !ok {
			continue
		}
		judged++
		// The worst repetition decides: etcd suffers from every slow fsync.
		p99 := time.Duration(cell.Stats.Max)
		st := Fail
		switch {
		case p99 <= etcdSyncPass:
			st = Pass
		case p99 <= etcdSyncWarn:
			st = Warn
		}
		detail := fmt.Sprintf("worst of %d repetition(s)", cell.N)
		if cell.N > 1 {
			detail += fmt.Sprintf(", mean %s", units.Latency(time.Duration(cell.Mean)))
		}
		v.Checks = append(v.Checks, Check{Subject: s.label, Name: "p99 fdatasync latency", Workload: cell.Workload, Round: s.round,
			Value: float64(p99), Unit: "ns", Display: units.Latency(p99), Status: st,
			Threshold: "pass <= 10 ms, warn <= 20 ms, fail above", Source: etcdSyncSource, Detail: detail})
		if w, ok := c.TargetCell(s.target, s.round, cell.Workload, result.MetricIOPS); ok {
			st, class := Pass, "enough for a heavily loaded cluster (>= 500)"
			switch {
			case w.Mean < 50:
				st, class = Warn, "below the 50 etcd needs even for a typical cluster"
			case w.Mean < 500:
				st, class = Info, "enough for a typical cluster (>= 50), short of the 500 for heavy load"
			}
			v.Checks = append(v.Checks, Check{Subject: s.label, Name: "synced sequential writes per second", Workload: cell.Workload, Round: s.round,
				Value: w.Mean, Unit: "IOPS", Display: units.IOPS(w.Mean) + " IOPS", Status: st,
				Threshold: "warn below 50 IOPS; 500 IOPS for heavy load", Source: etcdIOPSSource, Detail: class})
		}
	}
	if judged == 0 {
		return nil, &MissingError{For: ForEtcd, What: "no fdatasync latency measured"}
	}
	v.Summary = summarize(v, "etcd")
	return v, nil
}

// Ceph bands for 4 KiB synchronous QD1 writes. The boundaries are
// storbench's reading of what each device class achieves; the test itself
// is the one Ceph operators use to vet journal / WAL devices.
const (
	cephHDDMaxIOPS      = 500
	cephConsumerMaxIOPS = 5000
	cephSyncSource      = "storbench bands for the Ceph journal/WAL test (4 KiB O_SYNC|O_DIRECT writes at QD1, as in Sébastien Han's " +
		"'Ceph: how to test if your SSD is suitable as a journal device'); power-loss protection per docs.ceph.com hardware recommendations"
	cephThroughputSource = "storbench bands; 4 MiB writes as `ceph tell osd.N bench` issues them; a 1 GbE link carries about 117 MB/s (docs.ceph.com hardware recommendations: network)"
	cephDBSource         = "docs.ceph.com BlueStore configuration reference: block.db 1-4% of block; at least 4% for RGW (object), 1-2% for RBD (block)"
)

func cephVerdict(c *Comparison, opts VerdictOptions) (*Verdict, error) {
	v := &Verdict{}
	judged := 0
	for _, s := range c.subjects() {
		sync, okSync := c.find(s.target, s.round, result.MetricIOPS, []string{"sync-write-4k-qd1"}, nil)
		seq, okSeq := c.find(s.target, s.round, result.MetricBW, []string{"seq-write-4m"}, nil)
		cl, okCliff := c.CliffOf(s.target, s.round)
		if !okSync && !okSeq && !okCliff {
			continue
		}
		if okCliff {
			v.Checks = append(v.Checks, cliffCheck(s.label, s.round, cl, 117e6, "1 GbE", "a backfill or recovery", cephThroughputSource))
		}
		judged++
		if okSync {
			st, class := Pass, "datacentre SSD class: sync writes this fast mean a power-loss-protected cache acknowledges them"
			switch {
			case sync.Mean < cephHDDMaxIOPS:
				st, class = Fail, "HDD class: every sync write waits for the medium; unfit for BlueStore WAL/DB, usable as a data device only behind an SSD WAL/DB"
			case sync.Mean < cephConsumerMaxIOPS:
				st, class = Warn, "consumer SSD without power-loss protection: fast for plain writes but every sync write waits for flash; Ceph syncs every write"
			}
			v.Checks = append(v.Checks, Check{Subject: s.label, Name: "4 KiB sync write IOPS at QD1", Workload: sync.Workload, Round: s.round,
				Value: sync.Mean, Unit: "IOPS", Display: units.IOPS(sync.Mean) + " IOPS", Status: st,
				Threshold: fmt.Sprintf("HDD class below %d IOPS (fail), consumer SSD below %d (warn), datacentre SSD at or above %d (pass)",
					cephHDDMaxIOPS, cephConsumerMaxIOPS, cephConsumerMaxIOPS),
				Source: cephSyncSource, Detail: class})
		}
		if okSeq {
			st, class := Pass, "fast enough to keep up with a 10 GbE network during recovery"
			switch {
			case seq.Mean < 117e6:
				st, class = Warn, "slower than a 1 GbE link: this OSD will limit recovery and backfill"
			case seq.Mean < 1.25e9:
				st, class = Info, "faster than 1 GbE, slower than 10 GbE"
			}
			v.Checks = append(v.Checks, Check{Subject: s.label, Name: "4 MiB write throughput", Workload: seq.Workload, Round: s.round,
				Value: seq.Mean, Unit: "B/s", Display: units.MBps(seq.Mean), Status: st,
				Threshold: "warn below 117 MB/s (1 GbE); 1250 MB/s matches 10 GbE", Source: cephThroughputSource, Detail: class})
		}
	}
	if judged == 0 {
		return nil, &MissingError{For: ForCephOSD, What: "no sync-write-4k-qd1, seq-write-4m or sustained-write results"}
	}
	for _, t := range c.Targets {
		size, ok := opts.DeviceBytes[t]
		if !ok || size <= 0 {
			continue
		}
		v.Advice = append(v.Advice, fmt.Sprintf("%s (%s data device): block.db %s-%s for RBD (block, 1-2%%), at least %s for RGW (object, 4%%). Source: %s",
			t, units.Bytes(size), units.Bytes(size/100), units.Bytes(size/50), units.Bytes(size/25), cephDBSource))
	}
	if len(v.Advice) == 0 {
		v.Advice = append(v.Advice, "block.db: 1-2% of the data device for RBD (block), at least 4% for RGW (object); device size unknown, pass --device-size to get figures. Source: "+cephDBSource)
	}
	v.Summary = summarize(v, "a Ceph OSD")
	return v, nil
}

// piComponents are the PiBenchmarks score's terms: workload, metric, the
// unit it is read in, and its weight.
var piComponents = []struct {
	workload, metric, unit string
	weight                 float64
}{
	{"seq-write-dd", result.MetricBW, "MB/s", 1024},
	{"rand-read-4k-qd64", result.MetricIOPS, "IOPS", 4},
	{"rand-write-4k-qd64", result.MetricIOPS, "IOPS", 10},
	{"read-4k-qd1", result.MetricBW, "KB/s", 1},
	{"write-4k-qd1", result.MetricBW, "KB/s", 1},
	{"rand-read-4k-qd1", result.MetricBW, "KB/s", 4},
	{"rand-write-4k-qd1", result.MetricBW, "KB/s", 10},
}

const piSource = "PiBenchmarks.com overall score (dd sequential write, fio 4k QD64 random read/write, iozone 4k QD1): " +
	"(seq-write MB/s x 1024 + rand-read-4k-QD64 IOPS x 4 + rand-write-4k-QD64 IOPS x 10 + read-4k KB/s + write-4k KB/s + " +
	"rand-read-4k-QD1 KB/s x 4 + rand-write-4k-QD1 KB/s x 10) / 100; measured here with fio equivalents"

// PiScore computes the PiBenchmarks score of one target and round from the
// trimmed means of its repetitions (the site's convention). MB/s is 10^6
// bytes/s as dd prints it; KB/s is 1024 bytes/s as iozone prints it.
func PiScore(c *Comparison, target, round string) (score float64, terms []string, err error) {
	for _, p := range piComponents {
		cell, ok := c.TargetCell(target, round, p.workload, p.metric)
		if !ok {
			return 0, nil, &MissingError{For: ForPiScore, What: fmt.Sprintf("%s has no %s result", target, p.workload)}
		}
		v := cell.Stats.TrimmedMean
		switch p.unit {
		case "MB/s":
			v /= 1e6
		case "KB/s":
			v /= 1024
		}
		score += v * p.weight
		terms = append(terms, fmt.Sprintf("%s %.1f %s x %g", p.workload, v, p.unit, p.weight))
	}
	return score / 100, terms, nil
}

func piVerdict(c *Comparison) (*Verdict, error) {
	v := &Verdict{}
	var firstErr error
	for _, s := range c.subjects() {
		score, terms, err := PiScore(c, s.target, s.round)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		v.Checks = append(v.Checks, Check{Subject: s.label, Name: "PiBenchmarks score (fio equivalents)", Round: s.round,
			Value: score, Unit: "score", Display: fmt.Sprintf("%.0f", math.Round(score)), Status: Info,
			Threshold: "none: the score ranks devices, higher is better", Source: piSource,
			Detail: "(" + strings.Join(terms, " + ") + ") / 100"})
	}
	if len(v.Checks) == 0 {
		return nil, firstErr
	}
	best := v.Checks[0]
	for _, ch := range v.Checks[1:] {
		if ch.Value > best.Value {
			best = ch
		}
	}
	v.Summary = fmt.Sprintf("PiBenchmarks score (fio equivalents): best %s scores %s", best.Subject, best.Display)
	return v, nil
}

func summarize(v *Verdict, role string) string {
	counts := map[Status][]string{}
	seen := map[string]Status{}
	var order []string
	for _, ch := range v.Checks {
		if _, ok := seen[ch.Subject]; !ok {
			order = append(order, ch.Subject)
		}
		seen[ch.Subject] = Worse(seen[ch.Subject], ch.Status)
	}
	for _, s := range order {
		st := seen[s]
		if st == Info {
			st = Pass
		}
		counts[st] = append(counts[st], s)
	}
	var parts []string
	for _, st := range []Status{Pass, Warn, Fail} {
		if len(counts[st]) > 0 {
			word := map[Status]string{Pass: "fit for", Warn: "marginal for", Fail: "unfit for"}[st]
			parts = append(parts, fmt.Sprintf("%s %s %s", strings.Join(counts[st], ", "), word, role))
		}
	}
	return strings.Join(parts, "; ")
}
