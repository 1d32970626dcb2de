package render

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

// kubeReport is a report of two StorageClasses on three nodes with node-2
// slow on longhorn (analysis's testdata/kube.json), grouped by class, with
// the general verdict.
func kubeReport(t *testing.T) *Report {
	t.Helper()
	rs := resultsFile(t, "../analysis/testdata/kube.json")
	var figs []result.Figures
	for i := range rs {
		figs = append(figs, rs[i].Figures())
	}
	c, err := analysis.Compare(figs, analysis.Options{GroupBy: string(result.LabelStorageClass), Baseline: "storage_class=local-path"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := analysis.VerdictFor(analysis.ForGeneral, c, analysis.VerdictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := result.Run{ID: "20261123-100000-kube", Suite: "standard", Source: "storbench", Status: result.StatusComplete,
		Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	return &Report{View: analysis.NewView(c), Runs: []result.Run{run}, Verdicts: []*analysis.Verdict{v}}
}

func TestKubeReportGolden(t *testing.T) {
	r := kubeReport(t)
	for _, f := range []struct{ name, format string }{{"kube.txt", "text"}, {"kube.md", "markdown"}, {"kube.html", "html"}} {
		var b bytes.Buffer
		if err := WriteReport(&b, r, f.format, false); err != nil {
			t.Fatal(err)
		}
		golden(t, f.name, b.Bytes())
	}
}

// TestKubeReportReadsAtAGlance checks what a reader of a cluster report
// needs first, in every format: the placement table, the matrix, and the
// per-node figures that show node-2 dragging longhorn down.
func TestKubeReportReadsAtAGlance(t *testing.T) {
	r := kubeReport(t)
	var text bytes.Buffer
	if err := CompareText(&text, r, false); err != nil {
		t.Fatal(err)
	}
	s := text.String()
	for _, want := range []*regexp.Regexp{
		// The placement: one row per class and round, one column per use.
		regexp.MustCompile(`(?m)^STORAGE +READ-HEAVY +CI CACHES +LOGS$`),
		regexp.MustCompile(`(?m)^local-path \(isolated\) +good +good +good$`),
		regexp.MustCompile(`(?m)^longhorn \(parallel\) +acceptable +avoid +acceptable$`),
		// The matrix: both classes side by side, longhorn's share of local-path.
		regexp.MustCompile(`(?m)^rand-read-4k-qd32 +isolated +IOPS +40k ★ base +6833\? 17%$`),
		// Per node: node-2's longhorn figure is marked.
		regexp.MustCompile(`(?m)^node-2 +41k IOPS +2000 IOPS\?$`),
	} {
		if !want.MatchString(s) {
			t.Errorf("the text report has no line matching %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Threshold: good: random read >= 10k IOPS and sequential read >= 200 MB/s") {
		t.Error("a threshold is repeated per subject instead of stated once")
	}
	if n := strings.Count(s, "read-heavy services: good: random read >= 10k IOPS"); n != 1 {
		t.Errorf("the read-heavy threshold is stated %d times, want once", n)
	}
}

var nodeRectRe = regexp.MustCompile(`<rect x="0" y="[0-9.]+" width="([0-9.]+)"`)

func TestKubeReportHTMLInChromium(t *testing.T) {
	var b bytes.Buffer
	if err := ReportHTML(&b, kubeReport(t)); err != nil {
		t.Fatal(err)
	}
	dir, page, dom := loadInChromium(t, "kube.html", b.Bytes())
	for _, want := range []string{`<table class="placement">`, `<table class="matrix">`, "At a glance", "Per node", "The figures behind each rating"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the loaded page has no %q", want)
		}
	}
	charts := regexp.MustCompile(`(?s)<svg class="chart" data-chart="nodes".*?</svg>`).FindAllString(dom, -1)
	if len(charts) != 4 {
		t.Fatalf("%d per-node charts, want one per round and workload (4)", len(charts))
	}
	for _, c := range charts {
		bars := nodeRectRe.FindAllStringSubmatch(c, -1)
		if len(bars) != 6 {
			t.Errorf("a per-node chart has %d bars, want 3 nodes x 2 classes", len(bars))
		}
		for _, w := range bars {
			if v, _ := strconv.ParseFloat(w[1], 64); v <= 0 {
				t.Errorf("an empty bar (width %s)", w[1])
			}
		}
	}
	// In the matrix the two rounds sit side by side under each class.
	if !regexp.MustCompile(`<th class="name" colspan="2">local-path</th><th class="name" colspan="2">longhorn</th>`).MatchString(dom) {
		t.Error("the matrix does not put the rounds side by side under each class")
	}
	shot := filepath.Join(dir, "kube.png")
	chromium(t, page, "--window-size=412,3000", "--hide-scrollbars", "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < 10_000 {
		t.Fatalf("no screenshot of the rendered page: %v (%d bytes)", err, len(png))
	}
	t.Logf("screenshot: %s", shot)
}
