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
	direct, cmd := false, ""
	inTable := false
	var headerEnds []int
	var rowLines int
	for i, line := range lines(data) {
		n := i + 1
		if m := reIozoneCmdLine.FindStringSubmatch(line); m != nil {
			cmd = strings.TrimSpace(m[1])
			for _, a := range strings.Fields(cmd) {
				if a == "-I" {
					direct = true
				}
			}
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
			col := iozoneColumns[c]
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
				Labels:       map[string]string{"file_size": sizeName(fileKB * 1024)},
				DisplayUnits: map[string]string{result.MetricBW: "KiB/s"},
			}
			if col.rw == "write" || col.rw == "randwrite" || strings.Contains(col.name, "write") {
				r.Write = d
			} else {
				r.Read = d
			}
			p.results = append(p.results, r)
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
