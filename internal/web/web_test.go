package web

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// fixture is a real database: imports of real outputs of fio, iozone
// and a CSV, and (measured) a real fio run with telemetry.
type fixture struct {
	db       string
	imported []string // run IDs of the imports
	measured string   // the fio run's ID ("" unless measured)
}

func newFixture(t *testing.T, measure bool) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{db: filepath.Join(t.TempDir(), "results.db")}
	st, err := store.Open(ctx, f.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	td := "../importer/testdata/"
	for _, imp := range []struct {
		files  []string
		labels map[string]string
	}{
		{[]string{td + "fio-randread-4k-qd32.json", td + "fio-seqread-1m-qd8.jsonplus"}, map[string]string{"storage": "nvme"}},
		{[]string{td + "fio-text-pi4-usb-sata.txt"}, map[string]string{"storage": "usb-sata"}},
		{[]string{td + "iozone-nfs-hdd.txt", td + "results.csv"}, map[string]string{"storage": "nfs"}},
	} {
		rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: imp.files, Labels: imp.labels})
		if err != nil {
			t.Fatalf("importing %v: %v", imp.files, err)
		}
		f.imported = append(f.imported, rep.RunID)
	}
	if measure {
		testenv.Fio(t)
		run, err := storbench.Run(ctx, st, storbench.RunRequest{Suite: "testdata/dash-tiny.yaml", Targets: []string{t.TempDir()},
			Labels: map[string]string{"storage": "tmp"}, Repeat: 1, Telemetry: true, Round: result.RoundIsolated}, nil)
		if err != nil {
			t.Fatalf("measuring: %v", err)
		}
		f.measured = run.ID
	}
	return f
}

// serve starts the dashboard on 127.0.0.1.
func serve(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	s := New(opts)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func get(t *testing.T, c *http.Client, u string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// uniquePrefix is the shortest prefix of id that none of others starts
// with. Run IDs made in the same second share all but their four random
// hex digits, so a fixed cut of an ID is not unique by chance alone.
func uniquePrefix(id string, others ...string) string {
	for n := 1; n < len(id); n++ {
		if !slices.ContainsFunc(others, func(o string) bool { return strings.HasPrefix(o, id[:n]) }) {
			return id[:n]
		}
	}
	return id
}

var runRow = regexp.MustCompile(`<tr data-run="([^"]+)">`)

// fingerprint is the database file's bytes, hashed, and the size of its
// write-ahead log: what any write would change. (A reader of a WAL
// database may create the -shm index and an empty -wal beside it.)
func fingerprint(t *testing.T, db string) string {
	t.Helper()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	var wal int64
	if fi, err := os.Stat(db + "-wal"); err == nil {
		wal = fi.Size()
	}
	return fmt.Sprintf("%x, WAL %d bytes", sha256.Sum256(b), wal)
}

func TestPages(t *testing.T) {
	today := time.Now().Format("2006-01-02") // before the runs, which may be made past midnight
	f := newFixture(t, false)
	before := fingerprint(t, f.db)
	defer func() {
		if after := fingerprint(t, f.db); after != before {
			t.Errorf("serving changed the database or its folder:\n%s\n%s", before, after)
		}
	}()
	ts := serve(t, Options{DB: f.db})
	c := ts.Client()
	nvme, pi, nfs := f.imported[0], f.imported[1], f.imported[2]
	for _, tc := range []struct {
		name, path string
		status     int
		runs       []string // the runs list's rows, in order
		has        []string
	}{
		{"every run", "/", 200, []string{nfs, pi, nvme}, []string{"Compare selected"}},
		{"by label", "/?label=storage%3Dnvme", 200, []string{nvme}, nil},
		{"by two labels", "/?label=storage%3Dnvme,site%3Dlab", 200, nil, []string{"No runs match"}},
		{"by target", "/?target=nas%2C+bay+2", 200, []string{nfs}, nil},
		{"by suite", "/?suite=import", 200, []string{nfs, pi, nvme}, nil},
		{"by status", "/?status=failed", 200, nil, []string{"No runs match"}},
		{"since today", "/?since=" + today, 200, []string{nfs, pi, nvme}, nil},
		{"until long ago", "/?until=2001-01-01", 200, nil, nil},
		{"a bad label", "/?label=storage", 400, nil, []string{"write it as key=value"}},
		{"a bad date", "/?since=yesterday", 400, nil, []string{"give a date"}},
		{"a bad status", "/?status=happy", 400, nil, []string{"choose complete"}},
		{"a run", "/runs/" + nvme, 200, nil, []string{"Run " + nvme, "rand-read", `data-chart="bars"`, `data-chart="latency"`, "Latency percentiles"}},
		{"a run by prefix", "/runs/" + uniquePrefix(nvme, pi, nfs), 200, nil, []string{"Run " + nvme}},
		{"an ambiguous prefix", "/runs/20", 404, nil, []string{"matches 3 runs"}},
		{"an unknown run", "/runs/19990101", 404, nil, []string{"not found"}},
		{"compare, empty", "/compare", 200, nil, []string{"Pick runs"}},
		{"compare", "/compare?run=" + nvme + "&run=" + pi + "&group_by=storage&baseline=storage%3Dnvme", 200, nil,
			[]string{"Baseline: storage=nvme", "best usb-sata", `data-chart="bars"`, `data-chart="latency"`}},
		{"compare, typed", "/compare?runs=" + url.QueryEscape(nvme+" "+nfs), 200, nil, []string{`data-chart="bars"`}},
		{"compare, a bad baseline", "/compare?run=" + nvme + "&baseline=storage%3Dfloppy", 400, nil, []string{"floppy"}},
		{"no such page", "/nope", 404, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, c, ts.URL+tc.path)
			if code != tc.status {
				t.Fatalf("GET %s: %d, want %d\n%s", tc.path, code, tc.status, body)
			}
			if tc.runs != nil || strings.Contains(tc.path, "?") && tc.path[1] == '?' && tc.status == 200 {
				var got []string
				for _, m := range runRow.FindAllStringSubmatch(body, -1) {
					got = append(got, m[1])
				}
				if strings.Join(got, " ") != strings.Join(tc.runs, " ") {
					t.Errorf("GET %s: runs %v, want %v", tc.path, got, tc.runs)
				}
			}
			for _, h := range tc.has {
				if !strings.Contains(body, h) {
					t.Errorf("GET %s: no %q in the page", tc.path, h)
				}
			}
		})
	}
	code, body := get(t, c, ts.URL+"/runs/"+nvme+"/status.json")
	if code != 200 || !strings.Contains(body, `"status":"complete"`) || !strings.Contains(body, `"results":2`) {
		t.Errorf("status.json: %d %s", code, body)
	}
	// Nothing is written: no method but GET reaches a page.
	resp, err := c.Post(ts.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", resp.StatusCode)
	}
}

// Pages of 50 runs, newest first, with links both ways.
func TestRunsPagination(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "results.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 120 {
		r := &result.Run{ID: fmt.Sprintf("run-%03d", i), Suite: "quick", Status: result.StatusComplete, Started: start.Add(time.Duration(i) * time.Hour)}
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	ts := serve(t, Options{DB: db})
	next := "/"
	var pages [][]string
	for next != "" {
		code, body := get(t, ts.Client(), ts.URL+next)
		if code != 200 {
			t.Fatalf("GET %s: %d", next, code)
		}
		var ids []string
		for _, m := range runRow.FindAllStringSubmatch(body, -1) {
			ids = append(ids, m[1])
		}
		pages = append(pages, ids)
		m := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(body)
		next = ""
		if m != nil {
			next = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if len(pages) > 1 && !strings.Contains(body, `rel="prev"`) {
			t.Errorf("page %d has no link back", len(pages))
		}
	}
	if len(pages) != 3 || len(pages[0]) != 50 || len(pages[1]) != 50 || len(pages[2]) != 20 ||
		pages[0][0] != "run-119" || pages[1][0] != "run-069" || pages[2][19] != "run-000" {
		t.Errorf("pages: %d of sizes %d/%d/%d", len(pages), len(pages[0]), len(pages[min(1, len(pages)-1)]), len(pages[len(pages)-1]))
	}
}

// Before the first run there is no database: the dashboard says so, and
// creates nothing.
func TestNoDatabaseYet(t *testing.T) {
	dir := t.TempDir()
	ts := serve(t, Options{DB: filepath.Join(dir, "results.db")})
	code, body := get(t, ts.Client(), ts.URL+"/")
	if code != 200 || !strings.Contains(body, "No database at") {
		t.Errorf("runs list without a database: %d\n%s", code, body)
	}
	if code, _ := get(t, ts.Client(), ts.URL+"/runs/x"); code != http.StatusServiceUnavailable {
		t.Errorf("a run without a database: %d, want 503", code)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the dashboard created %d files", len(entries))
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr            string
		token, insecure bool
		loopback, ok    bool
	}{
		{"127.0.0.1:8080", false, false, true, true},
		{"[::1]:8080", false, false, true, true},
		{"localhost:8080", false, false, true, true},
		{"127.3.4.5:0", false, false, true, true},
		{"0.0.0.0:8080", false, false, false, false},
		{":8080", false, false, false, false},
		{"[::]:8080", false, false, false, false},
		{"192.168.1.10:8080", false, false, false, false},
		{"nas.lan:8080", false, false, false, false},
		{"0.0.0.0:8080", true, false, false, true},
		{"0.0.0.0:8080", false, true, false, true},
		{"8080", false, false, false, false},
	} {
		loopback, err := CheckListen(tc.addr, tc.token, tc.insecure)
		if (err == nil) != tc.ok || (err == nil && loopback != tc.loopback) {
			t.Errorf("CheckListen(%q, token %v, insecure %v) = %v, %v; want loopback %v, ok %v", tc.addr, tc.token, tc.insecure, loopback, err, tc.loopback, tc.ok)
		}
	}
}

func TestToken(t *testing.T) {
	f := newFixture(t, false)
	const token = "s3cret-token"
	ts := serve(t, Options{DB: f.db, Token: token})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		name, path string
		header     []string
		status     int
	}{
		{"no token", "/", nil, 401},
		{"no token, status", "/runs/" + f.imported[0] + "/status.json", nil, 401},
		{"wrong token", "/", []string{"Authorization", "Bearer nope"}, 401},
		{"token as a prefix", "/", []string{"Authorization", "Bearer s3cret"}, 401},
		{"bearer token", "/", []string{"Authorization", "Bearer " + token}, 200},
		{"bearer token, a run", "/runs/" + f.imported[0], []string{"Authorization", "Bearer " + token}, 200},
		{"a browser goes to the login page", "/runs/x", []string{"Accept", "text/html,application/xhtml+xml"}, 303},
		{"the login page itself", "/login", nil, 200},
		{"the liveness probe", "/healthz", nil, 200},
		{"a forged cookie", "/", []string{"Cookie", tokenCookie + "=nope"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, noRedirect, ts.URL+tc.path, tc.header...)
			if code != tc.status {
				t.Errorf("GET %s: %d, want %d\n%s", tc.path, code, tc.status, body)
			}
			if code == 401 && strings.Contains(body, f.imported[0]) {
				t.Error("a refused request shows a run")
			}
		})
	}

	// The login form keeps the token in a cookie and goes back to the page.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(ts.URL+"/login", url.Values{"token": {"wrong"}, "next": {"/compare"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("login with a wrong token: %d, want 401", resp.StatusCode)
	}
	resp, err = c.PostForm(ts.URL+"/login", url.Values{"token": {token}, "next": {"//evil.example/"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Host != strings.TrimPrefix(ts.URL, "http://") || !strings.Contains(string(b), f.imported[0]) {
		t.Errorf("after login: %d at %s", resp.StatusCode, resp.Request.URL)
	}
}
