package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// ForSQLite is the verdict on a volume for the apps that keep their state
// in SQLite (Home Assistant, Sonarr and Radarr, Jellyfin, Vaultwarden,
// Gitea), from results of round result.RoundApp.
const ForSQLite = "sqlite"

// AppFit is one target's newest app-fitness measurement.
type AppFit struct {
	Target    string        `json:"target"`
	RunID     string        `json:"run_id"`
	When      time.Time     `json:"when"`
	Semantics []AppSemantic `json:"semantics"`
	SQLite    []AppSQLite   `json:"sqlite"`
}

// AppSemantic is one filesystem semantic's answer.
type AppSemantic struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"`
	Seen    string `json:"seen"`
	// Evidence is the observations behind it, one per line.
	Evidence string `json:"evidence,omitempty"`
	// Clients says where the two clients ran.
	Clients string `json:"clients"`
}

// AppSQLite is one SQLite mode's commits.
type AppSQLite struct {
	Workload      string        `json:"workload"`
	Journal       string        `json:"journal"`
	Synchronous   string        `json:"synchronous"`
	Clients       int           `json:"clients"`
	CommitsPerSec float64       `json:"commits_per_sec"`
	P50           time.Duration `json:"p50_ns"`
	P99           time.Duration `json:"p99_ns"`
	// FlushesPerCommit is the disk's flushes per commit; negative when not
	// counted.
	FlushesPerCommit float64 `json:"flushes_per_commit"`
	Integrity        string  `json:"integrity,omitempty"`
}

// Semantic returns the named semantic, or nil.
func (a *AppFit) Semantic(name string) *AppSemantic {
	for i := range a.Semantics {
		if a.Semantics[i].Name == name {
			return &a.Semantics[i]
		}
	}
	return nil
}

// Mode returns the one-client SQLite figures of a journal and synchronous
// setting, or nil.
func (a *AppFit) Mode(journal, synchronous string) *AppSQLite {
	for i := range a.SQLite {
		s := &a.SQLite[i]
		if s.Journal == journal && s.Synchronous == synchronous && s.Clients == 1 {
			return s
		}
	}
	return nil
}

// AppFits groups results of round result.RoundApp by target and keeps each
// target's newest run, in target order.
func AppFits(results []result.Result) []*AppFit {
	newest := map[string]string{}
	for _, r := range results {
		if r.Round == result.RoundApp && r.RunID > newest[r.Target] {
			newest[r.Target] = r.RunID
		}
	}
	by := map[string]*AppFit{}
	for _, r := range results {
		if r.Round != result.RoundApp || r.RunID != newest[r.Target] {
			continue
		}
		a := by[r.Target]
		if a == nil {
			a = &AppFit{Target: r.Target, RunID: r.RunID, When: r.Started}
			by[r.Target] = a
		}
		if name, ok := strings.CutPrefix(r.Workload, "appfit:"); ok {
			a.Semantics = append(a.Semantics, AppSemantic{Name: name, Outcome: result.LabelCheckOutcome.Of(r.Labels),
				Seen: result.LabelCheckReason.Of(r.Labels), Evidence: result.LabelCheckEvidence.Of(r.Labels),
				Clients: result.LabelAppClients.Of(r.Labels)})
			continue
		}
		if s, ok := appSQLite(r); ok {
			a.SQLite = append(a.SQLite, s)
		}
	}
	var out []*AppFit
	for _, a := range by {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target < out[j].Target })
	return out
}

func appSQLite(r result.Result) (AppSQLite, bool) {
	if !strings.HasPrefix(r.Workload, "sqlite:") || r.Write == nil {
		return AppSQLite{}, false
	}
	s := AppSQLite{Workload: r.Workload, Journal: result.LabelSQLiteJournal.Of(r.Labels),
		Synchronous: result.LabelSQLiteSynchronous.Of(r.Labels), CommitsPerSec: r.Write.IOPS,
		FlushesPerCommit: -1, Integrity: result.LabelSQLiteIntegrity.Of(r.Labels)}
	s.Clients, _ = strconv.Atoi(result.LabelSQLiteClients.Of(r.Labels))
	s.P50, _ = r.Write.Completion.At(50)
	s.P99, _ = r.Write.Completion.At(99)
	if f, err := strconv.ParseFloat(result.LabelFlushesPerCommit.Of(r.Labels), 64); err == nil {
		s.FlushesPerCommit = f
	}
	return s, true
}

// Thresholds of the sqlite verdict (docs/appfit.md gives their sources).
const (
	SQLiteCommitsPass = 50.0
	SQLiteCommitsWarn = 10.0
	SQLiteP99Pass     = 100 * time.Millisecond
	SQLiteP99Warn     = time.Second

	sqliteLockSource = "SQLite: 'How To Corrupt An SQLite Database File' §2.1, filesystems with broken or missing lock " +
		"implementations (sqlite.org/howtocorrupt.html); FAQ 5 on NFS locking (sqlite.org/faq.html#q5)"
	sqliteSyncSource = "SQLite: 'How To Corrupt An SQLite Database File' §3.1, disk drives that do not honor sync " +
		"requests (sqlite.org/howtocorrupt.html)"
	sqliteRenameSource = "POSIX rename(2): a reader sees the old or the new file, never none; apps save config files " +
		"by writing a temporary file and renaming it over (Sonarr's config.xml, Home Assistant's .storage)"
	sqliteRateSource = "SQLite FAQ 19: 'a few dozen transactions per second' on a rotating disk " +
		"(sqlite.org/faq.html#q19): pass from 50; under 10 is storbench's own floor"
	sqliteP99Source = "storbench's own: Home Assistant's recorder commits every 5 s (commit_interval, " +
		"home-assistant.io/integrations/recorder) and an app's page waits on its commit; pass <= 100 ms, warn <= 1 s"
)

// SQLiteVerdict judges each target's newest app-fitness measurement in
// results (round result.RoundApp); none is a *MissingError.
func SQLiteVerdict(results []result.Result) (*Verdict, error) {
	fits := AppFits(results)
	if len(fits) == 0 {
		return nil, &MissingError{For: ForSQLite, What: "no app-fitness results (round app)"}
	}
	v := &Verdict{For: ForSQLite}
	var summary []string
	for _, a := range fits {
		checks := appChecks(a)
		v.Checks = append(v.Checks, checks...)
		summary = append(summary, appSummary(a, checks))
	}
	v.Summary = strings.Join(summary, "; ")
	for _, c := range v.Checks {
		v.Status = Worse(v.Status, c.Status)
	}
	if v.Status == Info {
		v.Status = Pass
	}
	return v, nil
}

// appChecks are one target's checks: locks, fsync, rename, then the
// commits of WAL with synchronous=FULL, SQLite's safe setting.
func appChecks(a *AppFit) []Check {
	var out []Check
	sem := func(name, title, source string, broken Status, risk string) {
		s := a.Semantic(name)
		if s == nil {
			return
		}
		c := Check{Subject: a.Target, Name: title, Workload: "appfit:" + name, Round: result.RoundApp, Unit: "outcome",
			Display: s.Outcome, Threshold: "works", Source: source, Detail: s.Seen}
		switch s.Outcome {
		case "works":
			c.Status = Pass
		case "broken":
			c.Status, c.Detail = broken, s.Seen+": "+risk
		default:
			c.Status = Info
		}
		out = append(out, c)
	}
	lockStatus, lockRisk := lockRisk(a)
	sem("fcntl-lock", "POSIX file locks between clients ("+clientsOf(a)+")", sqliteLockSource, lockStatus, lockRisk)
	sem("fsync-read-back", "fsync reaches the disk", sqliteSyncSource, Fail, "a power loss can lose committed transactions or corrupt the database")
	sem("rename-atomic", "rename atomic to a reader", sqliteRenameSource, Warn, "an app saving a file by rename can read none")
	if m := a.Mode("wal", "full"); m != nil {
		st := Fail
		switch {
		case m.CommitsPerSec >= SQLiteCommitsPass:
			st = Pass
		case m.CommitsPerSec >= SQLiteCommitsWarn:
			st = Warn
		}
		out = append(out, Check{Subject: a.Target, Name: "SQLite commits (WAL, synchronous=FULL)", Workload: m.Workload, Round: result.RoundApp,
			Value: m.CommitsPerSec, Unit: "commits/s", Display: fmt.Sprintf("%.0f commits/s", m.CommitsPerSec), Status: st,
			Threshold: "pass >= 50/s, warn >= 10/s, fail below", Source: sqliteRateSource, Detail: flushDetail(m)})
		st = Fail
		switch {
		case m.P99 <= SQLiteP99Pass:
			st = Pass
		case m.P99 <= SQLiteP99Warn:
			st = Warn
		}
		out = append(out, Check{Subject: a.Target, Name: "SQLite commit p99 (WAL, synchronous=FULL)", Workload: m.Workload, Round: result.RoundApp,
			Value: float64(m.P99), Unit: "ns", Display: units.Latency(m.P99), Status: st,
			Threshold: "pass <= 100 ms, warn <= 1 s, fail above", Source: sqliteP99Source, Detail: "p50 " + units.Latency(m.P50)})
	}
	// A database damaged by clients the locks did not keep apart is the
	// locks' risk seen, judged as they are; damaged with working locks,
	// something else is broken.
	damage := Fail
	if f := a.Semantic("fcntl-lock"); f != nil && f.Outcome == "broken" {
		damage = lockStatus
	}
	for _, s := range a.SQLite {
		if s.Clients > 1 && s.Integrity != "" && s.Integrity != "ok" {
			out = append(out, Check{Subject: a.Target, Name: fmt.Sprintf("SQLite database written by %d clients at once", s.Clients),
				Workload: s.Workload, Round: result.RoundApp, Unit: "outcome", Display: "damaged", Status: damage,
				Threshold: "integrity_check ok, every commit kept", Source: sqliteLockSource, Detail: "integrity_check: " + s.Integrity})
		}
	}
	return out
}

// lockRisk is what broken locks mean for a target: between two nodes,
// each node alone is still safe; through one mount, nothing is.
func lockRisk(a *AppFit) (Status, string) {
	if f := a.Semantic("fcntl-lock"); f != nil && strings.HasPrefix(f.Clients, "one client on") {
		return Warn, "file locks are not shared between nodes: a SQLite database opened from two nodes can be corrupted; one node at a time is safe"
	}
	return Fail, "file locks do not hold between two processes: two processes opening one SQLite database can corrupt it"
}

func clientsOf(a *AppFit) string {
	if f := a.Semantic("fcntl-lock"); f != nil && f.Clients != "" {
		return f.Clients
	}
	return "two clients"
}

func flushDetail(m *AppSQLite) string {
	if m.FlushesPerCommit < 0 {
		return "disk flushes not counted"
	}
	return fmt.Sprintf("%.2f disk flushes per commit", m.FlushesPerCommit)
}

// appSummary is one target's answer in a sentence: "longhorn: locks work;
// 212 commits/s (WAL, FULL), p99 9.8 ms: fine for Home Assistant's
// recorder".
func appSummary(a *AppFit, checks []Check) string {
	var parts []string
	worst := Pass
	for _, c := range checks {
		worst = Worse(worst, c.Status)
		if c.Status == Warn || c.Status == Fail {
			if c.Workload == "appfit:fcntl-lock" {
				_, risk := lockRisk(a)
				parts = append(parts, risk)
				continue
			}
			parts = append(parts, c.Name+": "+c.Detail)
		}
	}
	if f := a.Semantic("fcntl-lock"); f != nil && f.Outcome == "works" {
		parts = append([]string{"locks work"}, parts...)
	}
	if m := a.Mode("wal", "full"); m != nil {
		parts = append(parts, fmt.Sprintf("%.0f commits/s (WAL, FULL), p99 %s", m.CommitsPerSec, units.Latency(m.P99)))
	}
	s := a.Target + ": " + strings.Join(parts, "; ")
	switch worst {
	case Pass, Info:
		return s + ": fine for Home Assistant's recorder"
	case Warn:
		return s + ": fine for one app on one node"
	}
	return s + ": not safe for a SQLite database"
}

// AppReport is a run's app fitness as show and report present it: each
// target's answers and the SQLite verdict on them.
type AppReport struct {
	Fits    []*AppFit `json:"targets"`
	Verdict *Verdict  `json:"verdict"`
}

// AppReportOf is the app fitness in results, or nil when they hold none.
func AppReportOf(results []result.Result) *AppReport {
	v, err := SQLiteVerdict(results)
	if err != nil {
		return nil
	}
	return &AppReport{Fits: AppFits(results), Verdict: v}
}

// AppProfiles are the app profiles a class is judged for, one column each
// in classes.
var AppProfiles = []string{ForSQLite}

// ClassAppAnswer is a class's answer for an app profile from its newest
// qualification's app-fit check: "pass", "warn", "fail", or "-" when not
// measured (the check runs with the full profile).
func ClassAppAnswer(q *ClassQualification, profile string) string {
	if q == nil || profile != ForSQLite {
		return "-"
	}
	c := q.Check("app-fit")
	switch {
	case c == nil || c.Outcome == "skipped":
		return "-"
	case c.Outcome == "failed":
		return string(Fail)
	}
	if st, _, ok := strings.Cut(c.Reason, ": "); ok {
		return st
	}
	return c.Outcome
}
