package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// iozone's auto-mode table: the first two columns are the file size and
// record size in KiB, then one column per test, in kB/s (iozone's kB is
// 1024 bytes). Only the tests asked for with -i are filled in.
var iozoneColumns = []struct {
	name   string // the test, as its column heading reads
	rw     string // fio equivalent
	reread bool
}{
	{"write", "write", false},
	{"rewrite", "write", true},
	{"read", "read", false},
	{"reread", "read", true},
	{"random read", "randread", false},
	{"random write", "randwrite", false},
	{"bkwd read", "", false},
	{"record rewrite", "", false},
	{"stride read", "", false},
	{"fwrite", "", false},
	{"frewrite", "", false},
	{"fread", "", false},
	{"freread", "", false},
}

var (
	reIozoneRow     = regexp.MustCompile(`^\s*\d+(?:[ \t]+\d+)+[ \t]*$`)
	reIozoneCmdLine = regexp.MustCompile(`Command line used:\s*(.*)$`)
	reIozoneVersion = regexp.MustCompile(`Version \$Revision:\s*([\d.]+)`)
)

// parseIozone reads iozone -a tables. Rows are lines of whole numbers
// separated by blanks or tabs; anything else inside the block (prose pasted
// in between, blank lines) is skipped and counted.
func parseIozone(data []byte) (*parsed, error) {
	p := &parsed{tool: "iozone"}
	direct, cmd := iozoneCommand(data)
	if reIozoneReport.Match(data) && !reIozoneHead.Match(data) {
		return parseIozoneReport(data, p, direct, cmd)
	}
	inTable := false
	var headerEnds []int
	var rowLines int
	for i, line := range lines(data) {
		n := i + 1
		if reIozoneCmdLine.MatchString(line) {
			continue
		}
		if m := reIozoneVersion.FindStringSubmatch(line); m != nil {
			p.version = m[1]
			continue
		}
		if reIozoneHead.MatchString(line) {
			inTable = true
			headerEnds = wordEnds(expandTabs(line))
			continue
		}
		if !inTable {
			continue
		}
		trimmed := strings.TrimSpace(line)
		if !reIozoneRow.MatchString(line) {
			if trimmed != "" && !strings.HasPrefix(trimmed, "iozone test complete") {
				p.skipped = append(p.skipped, n)
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			p.skipped = append(p.skipped, n)
			continue
		}
		if len(fields)-2 > len(iozoneColumns) {
			return nil, errAt(n, 0, "expected at most %d figures after the file and record sizes, found %d", len(iozoneColumns), len(fields)-2)
		}
		cols := alignColumns(expandTabs(line), headerEnds, len(fields))
		if strings.Contains(trimmed, "\t") {
			// Tab-separated (pasted from a spreadsheet): an empty cell
			// between two tabs is a test that was not run.
			fields, cols = nil, nil
			for c, cell := range strings.Split(trimmed, "\t") {
				if cell = strings.TrimSpace(cell); cell != "" {
					fields, cols = append(fields, cell), append(cols, c)
				}
			}
			if len(cols) < 2 || cols[0] != 0 || cols[1] != 1 || cols[len(cols)-1]-2 >= len(iozoneColumns) {
				return nil, errAt(n, 0, "expected tab-separated file size, record size and up to %d rates, found %q", len(iozoneColumns), trimmed)
			}
		}
		fileKB, err1 := strconv.ParseInt(fields[0], 10, 64)
		recKB, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 != nil || err2 != nil || recKB <= 0 || fileKB <= 0 || fileKB > 1<<40 || recKB > 1<<30 {
			return nil, errAt(n, 0, "expected the file size and record size in kB, found %q", trimmed)
		}
		rowLines++
		for k, v := range fields[2:] {
			c := cols[k+2] - 2
			kbps, err := strconv.ParseFloat(v, 64)
			if err != nil || kbps > 1e15 {
				return nil, errAt(n, 0, "expected a rate in kB/s in column %q, found %q", iozoneColumns[c].name, v)
			}
			p.add(iozoneResult(iozoneColumns[c].name, fileKB, recKB, kbps, direct, cmd), n)
		}
	}
	if !inTable {
		return nil, errAt(1, 0, "expected an iozone table header (\"kB  reclen  write  rewrite  read ...\"), found none")
	}
	p.rows = rowLines
	p.notes = append(p.notes, fmt.Sprintf("iozone: read %d table rows (%d results)", rowLines, len(p.results)))
	if len(p.skipped) > 0 {
		p.notes = append(p.notes, fmt.Sprintf("iozone: skipped %d line(s) inside the table that are not table rows", len(p.skipped)))
	}
	return p, nil
}

// alignColumns says which header column each of a row's n fields belongs
// to. iozone right-aligns figures under their headings and leaves the
// columns of tests it did not run blank, so a field belongs to the heading
// that ends where it ends. When the row does not line up (tabs, pasted
// text), fields are taken in order.
func alignColumns(row string, headerEnds []int, n int) []int {
	seq := make([]int, n)
	for i := range seq {
		seq[i] = i
	}
	ends := wordEnds(row)
	if len(ends) != n || len(headerEnds) < n {
		return seq
	}
	out := make([]int, n)
	last := -1
	for i, e := range ends {
		best, bestDiff := -1, 3
		for c, h := range headerEnds {
			if d := abs(h - e); d <= bestDiff && c > last {
				best, bestDiff = c, d
			}
		}
		if best < 0 || best-2 >= len(iozoneColumns) {
			return seq
		}
		out[i], last = best, best
	}
	if out[0] != 0 || out[1] != 1 {
		return seq
	}
	return out
}

// wordEnds returns the offset just past each blank-separated word.
func wordEnds(s string) []int {
	var out []int
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && (i+1 == len(s) || s[i+1] == ' ') {
			out = append(out, i+1)
		}
	}
	return out
}

func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == '\t' {
			b.WriteString(strings.Repeat(" ", 8-b.Len()%8))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// iozoneCommand reads the "Command line used:" line: -I means O_DIRECT.
func iozoneCommand(data []byte) (direct bool, cmd string) {
	for _, line := range lines(data) {
		if m := reIozoneCmdLine.FindStringSubmatch(line); m != nil {
			cmd = strings.TrimSpace(m[1])
			for _, a := range strings.Fields(cmd) {
				if a == "-I" {
					direct = true
				}
			}
			return direct, cmd
		}
	}
	return false, ""
}

// iozoneResult is one test's rate for one file and record size.
func iozoneResult(test string, fileKB, recKB int64, kbps float64, direct bool, cmd string) result.Result {
	var col struct {
		name   string
		rw     string
		reread bool
	}
	for _, c := range iozoneColumns {
		if c.name == test {
			col = c
		}
	}
	bytesPerSec := kbps * 1024
	d := &result.Direction{BytesPerSec: bytesPerSec, IOPS: bytesPerSec / float64(recKB*1024)}
	meth := Method{RW: col.rw, BlockSize: recKB * 1024, IODepth: 1, Direct: ptr(direct)}
	workload := ""
	switch {
	case col.rw == "":
		workload = "iozone-" + sanitize(col.name) + "-" + sizeName(recKB*1024)
	case col.reread:
		workload = "iozone-" + col.name + "-" + sizeName(recKB*1024)
		if !direct {
			workload += "-buffered"
		}
	default:
		workload, _ = Workload(meth)
	}
	r := result.Result{
		Workload: workload,
		Method: fmt.Sprintf("iozone %s test, %d KiB file, %d KiB records, %s (%s)",
			col.name, fileKB, recKB, map[bool]string{true: "O_DIRECT (-I)", false: "buffered (no -I)"}[direct], orDefault(cmd, "command line not in the output")),
		Labels:       map[string]string{string(result.LabelFileSize): sizeName(fileKB * 1024)},
		DisplayUnits: map[string]string{result.MetricBW: "KiB/s"},
	}
	if col.rw == "write" || col.rw == "randwrite" || strings.Contains(col.name, "write") {
		r.Write = d
	} else {
		r.Read = d
	}
	return r
}

var (
	reIozoneReport    = regexp.MustCompile(`(?m)^"([A-Za-z -]+) report"\s*$`)
	reIozoneReportRow = regexp.MustCompile(`^"(\d+)"((?:\s+\d+)+)\s*$`)
	reIozoneRecLens   = regexp.MustCompile(`^\s*(?:"\d+"\s*)+$`)
)

// iozone -R report names, as the tests of the -a table call them.
var iozoneReports = map[string]string{
	"writer": "write", "re-writer": "rewrite", "reader": "read", "re-reader": "reread",
	"random read": "random read", "random write": "random write", "backward read": "bkwd read",
	"record rewrite": "record rewrite", "stride read": "stride read", "fwrite": "fwrite",
	"re-fwrite": "frewrite", "fread": "fread", "re-fread": "freread",
}

// parseIozoneReport reads iozone -R ("Excel") output: one block per test,
// headed "Writer report", a row of record sizes in kB, then one row per
// file size (kB) with a rate in kB/s for each record size, from the first.
func parseIozoneReport(data []byte, p *parsed, direct bool, cmd string) (*parsed, error) {
	test := ""
	var recs []int64
	for i, line := range lines(data) {
		n := i + 1
		if m := reIozoneReport.FindStringSubmatch(line); m != nil {
			test, recs = iozoneReports[strings.ToLower(m[1])], nil
			if test == "" {
				p.problems = append(p.problems, result.ImportProblem{Line: n, Kind: result.ProblemSkipped, Msg: fmt.Sprintf("iozone report %q is not one storbench knows; its block was not read", m[1])})
			}
			continue
		}
		if test == "" {
			continue
		}
		if reIozoneRecLens.MatchString(line) {
			recs = nil
			for _, f := range strings.Fields(line) {
				v, _ := strconv.ParseInt(strings.Trim(f, `"`), 10, 64)
				recs = append(recs, v)
			}
			continue
		}
		m := reIozoneReportRow.FindStringSubmatch(line)
		if m == nil {
			if t := strings.TrimSpace(line); t != "" {
				p.skipped = append(p.skipped, n)
			}
			continue
		}
		fileKB, err := strconv.ParseInt(m[1], 10, 64)
		vals := strings.Fields(m[2])
		if err != nil || fileKB <= 0 || fileKB > 1<<40 || len(recs) == 0 || len(vals) > len(recs) {
			p.problems = append(p.problems, result.ImportProblem{Line: n, Kind: result.ProblemSkipped, Msg: fmt.Sprintf("iozone %s report row does not match its record sizes: %q", test, strings.TrimSpace(line))})
			continue
		}
		p.rows++
		for k, v := range vals {
			kbps, err := strconv.ParseFloat(v, 64)
			if err != nil || recs[k] <= 0 || recs[k] > 1<<30 {
				continue
			}
			p.add(iozoneResult(test, fileKB, recs[k], kbps, direct, cmd), n)
		}
	}
	if len(p.results) == 0 {
		return nil, errAt(1, 0, "expected iozone -R report blocks (\"Writer report\" and rows of rates), found none")
	}
	p.notes = append(p.notes, fmt.Sprintf("iozone -R report: read %d rows (%d results)", p.rows, len(p.results)))
	return p, nil
}
