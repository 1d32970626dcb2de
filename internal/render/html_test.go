package render

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"

	"github.com/storbench/storbench/internal/analysis"
)

// chromium runs Debian's headless Chromium on a local file with a fresh
// profile and nothing that reaches the network, and returns its stdout and
// stderr (where --enable-logging puts console messages).
func chromium(t *testing.T, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	bin := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

func consoleMessages(stderr string) []string { return consoleLine.FindAllString(stderr, -1) }

// TestConsoleDetection proves the console check below can fail: a page
// with a script error is caught.
func TestConsoleDetection(t *testing.T) {
	page := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><script>notDefined()</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := chromium(t, page, "--dump-dom")
	if msgs := consoleMessages(stderr); len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), "Uncaught") {
		t.Fatalf("a script error went unnoticed; stderr:\n%s", stderr)
	}
}

// loadInChromium writes a page to a temporary directory, loads it in
// Chromium and fails the test on any console message; it returns the
// directory, the page's path and the DOM as loaded.
func loadInChromium(t *testing.T, name string, html []byte) (dir, page, dom string) {
	t.Helper()
	dir = t.TempDir()
	page = filepath.Join(dir, name)
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := chromium(t, page, "--dump-dom")
	if msgs := consoleMessages(stderr); len(msgs) > 0 {
		t.Errorf("console messages while loading %s:\n%s", name, strings.Join(msgs, "\n"))
	}
	return dir, page, dom
}

var (
	svgRe     = regexp.MustCompile(`(?s)<svg class="chart" data-chart="(bars|latency)".*?</svg>`)
	barRe     = regexp.MustCompile(`<rect class="bar[^"]*" x="0" y="[0-9.]+" width="([0-9.]+)"`)
	polyRe    = regexp.MustCompile(`<polyline points="([^"]+)"`)
	remoteRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`)
)

// TestReportHTMLGolden pins the HTML report byte for byte: the golden
// fixture with a verdict, environments and a fixed generation time.
func TestReportHTMLGolden(t *testing.T) {
	r := report(t, analysis.Options{GroupBy: "storage", Baseline: "storage=nvme"}, analysis.ForGeneral)
	r.Generated = time.Date(2026, 11, 22, 12, 30, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := ReportHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html", b.Bytes())
	if !strings.Contains(b.String(), "Generated 2026-11-22 12:30 UTC.") {
		t.Error("the generation time is missing")
	}
}

func TestReportHTMLInChromium(t *testing.T) {
	r := report(t, analysis.Options{GroupBy: "storage", Baseline: "storage=nvme"}, analysis.ForGeneral)
	var b bytes.Buffer
	if err := ReportHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if remoteRef.MatchString(html) || strings.Contains(html, "<script") {
		t.Fatal("the report loads something from elsewhere or runs a script; it must open offline as it is")
	}
	if !strings.Contains(html, `name="viewport" content="width=device-width`) {
		t.Error("no viewport meta: unreadable on a phone")
	}
	dir, page, dom := loadInChromium(t, "report.html", b.Bytes())
	for _, want := range []string{"Verdicts", "Summary", "Latency percentiles", "Efficiency against storage=nvme", "Stability", "Outliers", "Environment"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the loaded page has no %q section", want)
		}
	}
	charts := svgRe.FindAllStringSubmatch(dom, -1)
	count := map[string]int{}
	for _, c := range charts {
		count[c[1]]++
		switch c[1] {
		case "bars":
			widths := barRe.FindAllStringSubmatch(c[0], -1)
			if len(widths) != 2 {
				t.Errorf("a bar chart has %d bars, want one per group (2)", len(widths))
			}
			for _, w := range widths {
				if v, _ := strconv.ParseFloat(w[1], 64); v <= 0 {
					t.Errorf("an empty bar (width %s)", w[1])
				}
			}
		case "latency":
			lines := polyRe.FindAllStringSubmatch(c[0], -1)
			if len(lines) != 2 {
				t.Errorf("a latency chart has %d lines, want 2", len(lines))
			}
			for _, l := range lines {
				if n := len(strings.Fields(l[1])); n != 4 {
					t.Errorf("a latency line has %d points, want p50, p90, p99, p99.9", n)
				}
			}
		}
	}
	// Two rounds x two workloads, one bar chart and one latency chart each.
	if count["bars"] != 4 || count["latency"] != 4 {
		t.Errorf("charts in the loaded page: %v, want 4 bar and 4 latency charts", count)
	}

	// A phone-sized screenshot.
	shot := filepath.Join(dir, "report.png")
	chromium(t, page, "--window-size=412,2400", "--hide-scrollbars", "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if len(png) < 10_000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot is not a PNG of a rendered page (%d bytes)", len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}
