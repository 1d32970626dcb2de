package render

import (
	"fmt"

	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/storbench/storbench/internal/analysis"
)

// A doc is a report as a sequence of blocks, written once and emitted as
// terminal text or Markdown, so both always say the same thing.
type doc struct {
	blocks []block
}

type block interface{ isBlock() }

type heading struct {
	level int // 1 or 2
	text  string
}

type para struct{ text string }

type list struct{ items []listItem }

type listItem struct {
	text string
	// tone colours the item on a terminal: "", "good", "warn", "bad".
	tone string
	sub  []string
}

type table struct {
	head []string
	// right marks columns aligned right (numbers).
	right []bool
	rows  [][]string
	// tones colour whole cells on a terminal, indexed like rows.
	tones [][]string
	// optional columns are left out on a terminal when the table would not
	// fit Width otherwise.
	optional []bool
}

// without returns the table without column i.
func (b table) without(i int) table {
	drop := func(s []string) []string {
		if i >= len(s) {
			return s
		}
		return append(append([]string(nil), s[:i]...), s[i+1:]...)
	}
	out := table{head: drop(b.head)}
	for j, v := range b.right {
		if j != i {
			out.right = append(out.right, v)
		}
	}
	for j, v := range b.optional {
		if j != i {
			out.optional = append(out.optional, v)
		}
	}
	for _, r := range b.rows {
		out.rows = append(out.rows, drop(r))
	}
	for _, r := range b.tones {
		out.tones = append(out.tones, drop(r))
	}
	return out
}

type bars struct {
	title string
	items []bar
}

type bar struct {
	label   string
	value   float64
	display string
	best    bool
	// note follows the value: "unstable", "outlier".
	note string
}

// verdicts are shown as a list on a terminal and as cards in HTML.
type verdicts struct{ list []*analysis.Verdict }

// latencyCharts are drawn in HTML only: a terminal cannot plot a
// logarithmic axis legibly.
type latencyCharts struct{ charts []analysis.LatencyChart }

// environments list each target's labels: a list on a terminal, a card
// per target in HTML.
type environments struct{ list []analysis.Environment }

func (environments) isBlock()  {}
func (verdicts) isBlock()      {}
func (latencyCharts) isBlock() {}
func (heading) isBlock()       {}
func (para) isBlock()          {}
func (list) isBlock()          {}
func (table) isBlock()         {}
func (bars) isBlock()          {}

func (d *doc) h1(s string) { d.blocks = append(d.blocks, heading{1, s}) }
func (d *doc) h2(s string) { d.blocks = append(d.blocks, heading{2, s}) }
func (d *doc) p(format string, a ...any) {
	d.blocks = append(d.blocks, para{fmt.Sprintf(format, a...)})
}
func (d *doc) add(b block) { d.blocks = append(d.blocks, b) }

// Width is the terminal width text output fits in.
const Width = 80

// Star marks the best target or group.
const Star = "★"

// textWriter emits a doc for a terminal, optionally with ANSI colour.
type textWriter struct {
	w     io.Writer
	color bool
	err   error
}

func (t *textWriter) printf(format string, a ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, a...)
	}
}

func (t *textWriter) paint(tone, s string) string {
	if !t.color || s == "" {
		return s
	}
	code := map[string]string{"good": "32", "warn": "33", "bad": "31", "best": "1;32", "dim": "2", "head": "1"}[tone]
	if code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// plain returns the blocks with those drawn differently in HTML (verdicts,
// the matrix, per-node charts) replaced by the lists and tables a terminal
// and Markdown show.
func (d *doc) plain() []block {
	var out []block
	for _, b := range d.blocks {
		switch b := b.(type) {
		case verdicts:
			out = append(out, verdictBlocks(b.list)...)
		case matrix:
			out = append(out, b.table())
		case nodeCharts:
			out = append(out, b.blocks()...)
		case sweepCharts:
			out = append(out, b.blocks()...)
		default:
			out = append(out, b)
		}
	}
	return out
}

func writeText(w io.Writer, d *doc, color bool) error {
	t := &textWriter{w: w, color: color}
	blocks := d.plain()
	for i, b := range blocks {
		b = terminalBlock(b)
		if i > 0 {
			if _, isHead := b.(heading); isHead {
				t.printf("\n")
			}
		}
		switch b := b.(type) {
		case heading:
			t.printf("%s\n", t.paint("head", b.text))
			ch := "="
			if b.level > 1 {
				ch = "-"
			}
			t.printf("%s\n", strings.Repeat(ch, min(Width, displayWidth(b.text))))
		case para:
			if i > 0 {
				if _, afterHead := blocks[i-1].(heading); !afterHead {
					t.printf("\n")
				}
			}
			for _, l := range wrap(b.text, Width) {
				t.printf("%s\n", l)
			}
		case list:
			writeList(t, b)
		case environments:
			writeList(t, environmentList(b.list))
		case table:
			t.table(b)
		case bars:
			t.bars(b)
		}
		if t.err != nil {
			return t.err
		}
	}
	return t.err
}

// terminalBlock escapes what a block shows for a terminal (see Terminal).
func terminalBlock(b block) block {
	switch b := b.(type) {
	case heading:
		b.text = Terminal(b.text)
		return b
	case para:
		b.text = Terminal(b.text)
		return b
	case list:
		return terminalList(b)
	case environments:
		return terminalList(environmentList(b.list))
	case table:
		out := b
		out.head = terminalCells(b.head)
		out.rows = nil
		for _, r := range b.rows {
			out.rows = append(out.rows, terminalCells(r))
		}
		return out
	case bars:
		return terminalBars(b)
	}
	return b
}

func terminalList(b list) list {
	out := list{}
	for _, it := range b.items {
		it.text = Terminal(it.text)
		it.sub = terminalCells(it.sub)
		out.items = append(out.items, it)
	}
	return out
}

func terminalCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = Terminal(c)
	}
	return out
}

func terminalBars(b bars) bars {
	out := bars{title: Terminal(b.title)}
	for _, it := range b.items {
		it.label, it.display, it.note = Terminal(it.label), Terminal(it.display), Terminal(it.note)
		out.items = append(out.items, it)
	}
	return out
}

func writeList(t *textWriter, b list) {
	for _, it := range b.items {
		lines := wrap(it.text, Width-2)
		for j, l := range lines {
			lead := "  "
			if j == 0 {
				lead = "- "
			}
			t.printf("%s%s\n", lead, t.paint(it.tone, l))
		}
		for _, s := range it.sub {
			for j, l := range wrap(s, Width-6) {
				lead := "      "
				if j == 0 {
					lead = "    * "
				}
				t.printf("%s%s\n", lead, l)
			}
		}
	}
}

// table writes columns padded to their widest cell; the first column is
// shortened (keeping its end, where paths differ) so the table fits Width.
func (t *textWriter) table(b table) {
	widths := make([]int, len(b.head))
	for i, h := range b.head {
		widths[i] = displayWidth(h)
	}
	for _, r := range b.rows {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	total := 0
	for _, w := range widths {
		total += w + 2
	}
	over := total - 2 - Width
	if over > 0 {
		// Shortening names hides which target a row is: drop secondary
		// columns first.
		for i := len(b.optional) - 1; i >= 0; i-- {
			if b.optional[i] {
				t.table(b.without(i))
				return
			}
		}
	}
	if over > 0 {
		widths[0] = max(widths[0]-over, 8)
	}
	line := func(cells []string, tones []string, head bool) {
		var sb strings.Builder
		for i, c := range cells {
			c = shorten(c, widths[i])
			pad := strings.Repeat(" ", widths[i]-displayWidth(c))
			tone := ""
			if tones != nil && i < len(tones) {
				tone = tones[i]
			}
			if head {
				tone = "head"
			}
			c = t.paint(tone, c)
			if i < len(b.right) && b.right[i] {
				sb.WriteString(pad + c)
			} else {
				sb.WriteString(c + pad)
			}
			if i < len(cells)-1 {
				sb.WriteString("  ")
			}
		}
		t.printf("%s\n", strings.TrimRight(sb.String(), " "))
	}
	line(b.head, nil, true)
	for i, r := range b.rows {
		var tones []string
		if i < len(b.tones) {
			tones = b.tones[i]
		}
		line(r, tones, false)
	}
}

// eighths draw a bar's last cell to 1/8 of a character.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// barCells returns a bar of length frac*width cells, at 1/8 precision.
func barCells(frac float64, width int) string {
	if frac <= 0 || math.IsNaN(frac) {
		return ""
	}
	units := int(math.Round(math.Min(frac, 1) * float64(width) * 8))
	if units == 0 {
		units = 1 // a measured value never disappears
	}
	return strings.Repeat("█", units/8) + eighths[units%8]
}

func (t *textWriter) bars(b bars) {
	if b.title != "" {
		t.printf("%s\n", b.title)
	}
	labelW, valueW := 0, 0
	maxV := 0.0
	for _, it := range b.items {
		labelW = max(labelW, displayWidth(it.label))
		v := it.display
		if it.best {
			v += " " + Star
		}
		if it.note != "" {
			v += " " + it.note
		}
		valueW = max(valueW, displayWidth(v))
		maxV = math.Max(maxV, it.value)
	}
	labelW = min(labelW, 22)
	barW := Width - labelW - valueW - 3
	if barW < 10 {
		barW = 10
		valueW = Width - labelW - barW - 3
	}
	for _, it := range b.items {
		label := shorten(it.label, labelW)
		cells := barCells(it.value/maxV, barW)
		value := it.display
		if it.best {
			value += " " + t.paint("best", Star)
		}
		if it.note != "" {
			value += " " + t.paint("warn", it.note)
		}
		tone := ""
		if it.best {
			tone = "good"
		}
		line := label + strings.Repeat(" ", labelW-displayWidth(label)) + " " + t.paint(tone, cells) +
			strings.Repeat(" ", barW-displayWidth(cells)) + " " + value
		t.printf("%s\n", strings.TrimRight(line, " "))
	}
}

func writeMarkdown(w io.Writer, d *doc) error {
	t := &textWriter{w: w}
	for i, b := range d.plain() {
		if _, htmlOnly := b.(latencyCharts); htmlOnly {
			continue
		}
		if i > 0 {
			t.printf("\n")
		}
		switch b := b.(type) {
		case heading:
			t.printf("%s %s\n", strings.Repeat("#", b.level+1), mdBlock(b.text))
		case para:
			t.printf("%s\n", mdBlock(b.text))
		case list:
			writeMDList(t, b)
		case environments:
			writeMDList(t, environmentList(b.list))
		case table:
			cells := func(row []string) string {
				out := make([]string, len(row))
				for i, c := range row {
					out[i] = mdEscape(c)
				}
				return "| " + strings.Join(out, " | ") + " |"
			}
			t.printf("%s\n", cells(b.head))
			seps := make([]string, len(b.head))
			for i := range seps {
				seps[i] = "---"
				if i < len(b.right) && b.right[i] {
					seps[i] = "--:"
				}
			}
			t.printf("|%s|\n", strings.Join(seps, "|"))
			for _, r := range b.rows {
				t.printf("%s\n", cells(r))
			}
		case bars:
			// Bars keep their shape in a fenced block on GitHub and blogs.
			if b.title != "" {
				t.printf("%s\n\n", mdBlock(b.title))
			}
			var body strings.Builder
			(&textWriter{w: &body}).bars(terminalBars(bars{items: b.items}))
			fence := mdFence(body.String())
			t.printf("%stext\n%s%s\n", fence, body.String(), fence)
		}
		if t.err != nil {
			return t.err
		}
	}
	return t.err
}

func writeMDList(t *textWriter, b list) {
	for _, it := range b.items {
		t.printf("- %s\n", mdBlock(it.text))
		for _, s := range it.sub {
			t.printf("  - %s\n", mdBlock(s))
		}
	}
}

func displayWidth(s string) int { return utf8.RuneCountInString(s) }

// shorten fits s in n characters, keeping its end: "…/mnt/ssd".
func shorten(s string, n int) string {
	if displayWidth(s) <= n || n < 2 {
		return s
	}
	r := []rune(s)
	return "…" + string(r[len(r)-(n-1):])
}

// wrap breaks text into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		line := ""
		for _, w := range words {
			switch {
			case line == "":
				line = w
			case displayWidth(line)+1+displayWidth(w) <= n:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
		lines = append(lines, line)
	}
	return lines
}
