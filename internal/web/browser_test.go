package web

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// artefacts is where screenshots are kept: $STORBENCH_ARTEFACTS/NAME, or a
// temporary folder.
func artefacts(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if a := os.Getenv("STORBENCH_ARTEFACTS"); a != "" {
		dir = filepath.Join(a, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

var (
	chartRe   = regexp.MustCompile(`(?s)<svg class="chart" data-chart="([a-z]+)".*?</svg>`)
	barWidth  = regexp.MustCompile(`<rect class="bar[^"]*" x="0" y="[0-9.]+" width="([0-9.]+)"`)
	polyPts   = regexp.MustCompile(`<polyline[^>]* points="([^"]*)"`)
	remoteRef = regexp.MustCompile(`(?i)(src|href|action)\s*=\s*"(https?:)?//`)
)

// chartProblems says what is empty in a chart: a bar chart needs bars of
// some width, a line chart lines of two points or more.
func chartProblems(kind, svg string) []string {
	var out []string
	switch kind {
	case "bars":
		ws := barWidth.FindAllStringSubmatch(svg, -1)
		if len(ws) == 0 {
			out = append(out, "a bar chart without bars")
		}
		for _, w := range ws {
			if v, _ := strconv.ParseFloat(w[1], 64); v <= 0 {
				out = append(out, "a bar of width "+w[1])
			}
		}
	default:
		ls := polyPts.FindAllStringSubmatch(svg, -1)
		if len(ls) == 0 {
			out = append(out, "a "+kind+" chart without lines")
		}
		for _, l := range ls {
			if len(strings.Fields(l[1])) < 2 {
				out = append(out, "a "+kind+" line of fewer than two points")
			}
		}
	}
	return out
}

// Headless Chromium loads every page: no console message, every chart
// drawn, nothing fetched from elsewhere; a phone-sized screenshot of each.
func TestPagesInChromium(t *testing.T) {
	testenv.Chromium(t)
	f := newFixture(t, true)
	// A run in progress: its page carries the script that follows it.
	st, err := store.Open(context.Background(), f.db)
	if err != nil {
		t.Fatal(err)
	}
	running := &result.Run{ID: "20991231-000000-live", Suite: "quick", Status: result.StatusRunning, Started: time.Now(), Targets: []string{"/mnt/x"}}
	if err := st.CreateRun(context.Background(), running); err != nil {
		t.Fatal(err)
	}
	st.Close()
	storeHistory(t, f.db, "/mnt/nas-disk-2", 14, 4, 0.5)
	ts := serve(t, Options{DB: f.db})
	gated := serve(t, Options{DB: f.db, Token: "t0ken"})
	dir := artefacts(t, "dashboard")
	nvme := f.imported[0]
	for _, p := range []struct {
		name, url string
		// charts wants at least this many charts of each kind.
		charts map[string]int
		has    []string
	}{
		{"runs", ts.URL + "/", nil, []string{f.measured, nvme, "Compare selected"}},
		{"runs-filtered", ts.URL + "/?label=storage%3Dtmp&suite=dash-tiny", nil, []string{f.measured}},
		{"run-measured", ts.URL + "/runs/" + f.measured, map[string]int{"bars": 2, "latency": 2, "timeline": 4}, []string{"limited by", "Telemetry", "Latency percentiles"}},
		{"run-imported", ts.URL + "/runs/" + nvme, map[string]int{"bars": 2, "latency": 2}, []string{"rand-read-4k-qd32"}},
		{"run-live", ts.URL + "/runs/" + running.ID, nil, []string{"in progress", "No completed result yet"}},
		{"compare", ts.URL + "/compare?run=" + nvme + "&run=" + f.measured + "&run=" + f.imported[2] + "&group_by=storage", map[string]int{"bars": 2}, []string{"Summary"}},
		{"compare-empty", ts.URL + "/compare", nil, []string{"Pick runs"}},
		{"trend-targets", ts.URL + "/trend", nil, []string{"/mnt/nas-disk-2", "Pick a target"}},
		{"trend", ts.URL + "/trend?target=%2Fmnt%2Fnas-disk-2", map[string]int{"trend": 1}, []string{"regression", "below its baseline"}},
		{"login", gated.URL + "/", nil, []string{"Token required"}},
	} {
		t.Run(p.name, func(t *testing.T) {
			dom, stderr := testenv.Browse(t, p.url, "--dump-dom")
			if msgs := testenv.ConsoleMessages(stderr); len(msgs) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(msgs, "\n"))
			}
			if remoteRef.MatchString(dom) {
				t.Error("the page refers to another site")
			}
			for _, h := range p.has {
				if !strings.Contains(dom, h) {
					t.Errorf("no %q in the page", h)
				}
			}
			count := map[string]int{}
			for _, c := range chartRe.FindAllStringSubmatch(dom, -1) {
				count[c[1]]++
				for _, problem := range chartProblems(c[1], c[0]) {
					t.Errorf("%s chart: %s", c[1], problem)
				}
			}
			for kind, n := range p.charts {
				if count[kind] < n {
					t.Errorf("%d %s charts, want at least %d (all: %v)", count[kind], kind, n, count)
				}
			}
			shot := filepath.Join(dir, p.name+".png")
			testenv.Browse(t, p.url, "--window-size=1200,2400", "--hide-scrollbars", "--screenshot="+shot)
			png, err := os.ReadFile(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			if len(png) < 5_000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("the screenshot is not a PNG of a drawn page (%d bytes)", len(png))
			}
		})
	}
}

// The chart check can fail: an empty chart is caught.
func TestChartProblems(t *testing.T) {
	for kind, svg := range map[string]string{
		"bars":     `<svg class="chart" data-chart="bars"><rect class="bar" x="0" y="2" width="0.0" height="14"></rect></svg>`,
		"timeline": `<svg class="chart" data-chart="timeline"><polyline points="1,2" fill="none"></polyline></svg>`,
		"latency":  `<svg class="chart" data-chart="latency"></svg>`,
	} {
		if len(chartProblems(kind, svg)) == 0 {
			t.Errorf("an empty %s chart passed", kind)
		}
	}
}
