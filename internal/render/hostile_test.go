package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

func TestTerminal(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ordinary", `nvme /mnt/a b\c µs ★ 漢字`, `nvme /mnt/a b\c µs ★ 漢字`},
		{"ESC colour and clear screen", "a\x1b[31mred\x1b[2J", `a\x1b[31mred\x1b[2J`},
		{"carriage return overwrites", "ok\rFAKE", `ok\rFAKE`},
		{"bell, NUL, DEL", "\a\x00\x7f", `\x07\x00\x7f`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`},
		{"C1 CSI as a character", "x\u009b31my", `x\u009b31my`},
		{"C1 as a raw byte", "x\x9b31my", `x\x9b31my`},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\click\x1b]8;;\x1b\`},
		{"bidi override", "file\u202Etxt.exe", `file\u202etxt.exe`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.in); got != tt.want {
				t.Errorf("Terminal(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMarkdownEscapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ordinary verdict text", "nvme (isolated): good [PASS] random read >= 10k IOPS, 22.3%!", "nvme (isolated): good [PASS] random read >= 10k IOPS, 22.3%!"},
		{"newline and code fence", "x\n```\n<b>", "x\\n\\`\\`\\`\\n&lt;b>"},
		{"javascript link", "[click](javascript:alert(1))", `\[click\](javascript:alert(1))`},
		{"image", "![i](http://x/y.png)", `!\[i\](http://x/y.png)`},
		{"reference definition", "[PASS]: javascript:alert(1)", `\[PASS\]: javascript:alert(1)`},
		{"raw HTML", `<img src=x onerror="alert(1)">`, `&lt;img src=x onerror="alert(1)">`},
		{"pipe breaks a table", "a|b", `a\|b`},
		{"emphasis and strike", "*a* _b_ ~~c~~", `\*a\* \_b\_ \~\~c\~\~`},
		{"terminal escape", "\x1b[31m", `\x1b[31m`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mdEscape(tt.in); got != tt.want {
				t.Errorf("mdEscape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	for in, want := range map[string]string{"# h": `\# h`, "> q": `\> q`, "- i": `\- i`, "1. x": `\1. x`, "-25%": "-25%", "#1": "#1"} {
		if got := mdBlock(in); got != want {
			t.Errorf("mdBlock(%q) = %q, want %q", in, got, want)
		}
	}
}

// hostile is a label that tries everything at once.
const hostile = "nvme\n```\n<script>alert(1)</script>\n[click](javascript:alert(1)) | x\x1b[31m\r# Owned\u202e"

// hostileReport is the golden fixture with one group's label, one target
// and one workload name replaced by hostile text.
func hostileReport(t *testing.T) *Report {
	figs := fixture(t)
	for i := range figs {
		if figs[i].Labels["storage"] == "nvme" {
			figs[i].Labels["storage"] = hostile
		}
		if figs[i].Target == "/mnt/s2" {
			figs[i].Target = "/mnt/s2\x1b]0;title\a"
		}
		if figs[i].Workload == "seq-read" {
			figs[i].Workload = "seq-read`\n## fake"
		}
	}
	c, err := analysis.Compare(figs, analysis.Options{GroupBy: "storage"})
	if err != nil {
		t.Fatal(err)
	}
	return &Report{View: analysis.NewView(c), Runs: []result.Run{fixtureRun}}
}

func TestHostileLabelsGolden(t *testing.T) {
	r := hostileReport(t)
	var text, md bytes.Buffer
	if err := CompareText(&text, r, true); err != nil {
		t.Fatal(err)
	}
	if err := CompareMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "hostile.txt", text.Bytes())
	golden(t, "hostile.md", md.Bytes())

	// On the terminal the only escape sequences are storbench's colours.
	plain := colours.ReplaceAllString(text.String(), "")
	if strings.ContainsAny(plain, "\x1b\r\a\u202e\u009b") {
		t.Errorf("a control character reached the terminal: %q", plain)
	}
	for _, bad := range []string{"<script", "\x1b", "\r", "\n# Owned", "\n## fake"} {
		if strings.Contains(md.String(), bad) {
			t.Errorf("the Markdown holds %q", bad)
		}
	}
	if link := regexp.MustCompile(`(^|[^\\])\]\(`).FindString(md.String()); link != "" {
		t.Errorf("the Markdown holds a link: %q", link)
	}
	// Every fence line is one of the bar charts' own, and they pair up.
	fences := 0
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "```") {
			if l != "```text" && l != "```" {
				t.Errorf("stray fence line %q", l)
			}
			fences++
		}
	}
	if fences%2 != 0 {
		t.Errorf("%d fence lines: one is unclosed", fences)
	}
}

func TestHostileRunsAndResults(t *testing.T) {
	run := result.Run{ID: "20261122-100000-aaaa", Suite: "evil\x1b[2J", Status: result.StatusComplete, Started: time.Unix(0, 0),
		Targets: []string{"/mnt/a\rX"}, Labels: map[string]string{"storage": "ssd\n20261122-999999-ffff  fake row"}, Note: "n"}
	res := []result.Result{{Workload: "w\x1b[8m", Target: "/t", Repetition: 1, Status: result.StatusFailed, Error: "fio said \x1b]52;c;AAAA\a"}}
	var b bytes.Buffer
	if err := RunsTable(&b, []result.Run{run}, "/tmp/r.db"); err != nil {
		t.Fatal(err)
	}
	if err := RunHeader(&b, &run); err != nil {
		t.Fatal(err)
	}
	if err := ResultsTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\r\a") {
		t.Errorf("control characters printed: %q", out)
	}
	if strings.Contains(out, "\n20261122-999999-ffff") {
		t.Errorf("a label forged a row:\n%s", out)
	}
	for _, want := range []string{`evil\x1b[2J`, `/mnt/a\rX`, `ssd\n20261122-999999-ffff`, `w\x1b[8m`, `fio said \x1b]52;c;AAAA\x07`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks the visible %q:\n%s", want, out)
		}
	}
}

// colours are the SGR sequences storbench itself paints with.
var colours = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// A failed result that keeps figures is marked failed on its rows.
func TestFailedResultWithFiguresIsMarked(t *testing.T) {
	res := []result.Result{{Workload: "good", Repetition: 1, Status: result.StatusFailed, Error: "fio exited 1",
		Read: &result.Direction{IOPS: 1000, BytesPerSec: 4e6, TotalIOs: 10}}}
	var b bytes.Buffer
	if err := ResultsTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "good (failed)") || !strings.Contains(b.String(), "FAILED good: fio exited 1") {
		t.Errorf("failed result with figures:\n%s", b.String())
	}
}
