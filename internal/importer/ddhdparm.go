package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

var (
	// GNU dd's summary: "335544320 bytes (336 MB, 320 MiB) copied, 1,86384 s, 180 MB/s".
	// Older coreutils print "(336 MB)"; a locale may use a decimal comma.
	reDDSummary = regexp.MustCompile(`^\s*(\d+) bytes?(?: \([^)]*\))? copied, ([\d.,]+) s, ([\d.,]+) ([kMGTP]?B)/s\s*$`)
	reDDRecords = regexp.MustCompile(`^\s*(\d+)\+(\d+) records out`)
	reDDCommand = regexp.MustCompile(`(?:^|[\s;|&$#>])dd\s+(.*\b(?:if|of)=.*)$`)

	reHdparmTiming = regexp.MustCompile(`^\s*Timing (O_DIRECT )?(buffered disk|cached|disk) reads:\s+(\d+) MB in\s+([\d.,]+) seconds\s*=\s*([\d.,]+) ([kM])B/sec`)
	reHdparmDevice = regexp.MustCompile(`^\s*(/dev/\S+):\s*$`)
	reHdparmCmd    = regexp.MustCompile(`hdparm\s+(.*)$`)
)

// parseDD reads GNU dd's summary lines. A dd command line before them (a
// shell prompt or "# dd ..." comment, as people paste them) tells the
// direction, block size and flags; without one the result is recorded as a
// write of unknown method, dd's usual benchmark.
func parseDD(data []byte) (*parsed, error) {
	p := &parsed{tool: "dd"}
	var firstErr *ParseError
	var args map[string]string
	var records int64 = -1
	for i, line := range lines(data) {
		n := i + 1
		if m := reDDCommand.FindStringSubmatch(line); m != nil && !strings.Contains(line, "copied") {
			args = ddArgs(m[1])
			records = -1
			continue
		}
		if m := reDDRecords.FindStringSubmatch(line); m != nil {
			full, _ := strconv.ParseInt(m[1], 10, 64)
			partial, _ := strconv.ParseInt(m[2], 10, 64)
			records = full + partial
			continue
		}
		if !strings.Contains(line, "copied, ") {
			continue
		}
		m := reDDSummary.FindStringSubmatch(line)
		if m == nil {
			if firstErr == nil {
				firstErr = errAt(n, 0, "expected dd's summary such as \"335544320 bytes (336 MB, 320 MiB) copied, 1.86384 s, 180 MB/s\", found %q", strings.TrimSpace(line))
			}
			p.problems = append(p.problems, result.ImportProblem{Line: n, Kind: result.ProblemSkipped, Msg: fmt.Sprintf("not a dd summary line: %q", strings.TrimSpace(line))})
			continue
		}
		nbytes, err1 := strconv.ParseInt(m[1], 10, 64)
		secs, err2 := decimal(m[2])
		rate, err3 := decimal(m[3])
		f, ok := units.ThroughputFactor(m[4] + "/s")
		if m[4] == "kB" {
			f, ok = 1e3, true
		}
		if err1 != nil || err2 != nil || err3 != nil || !ok {
			return nil, errAt(n, 0, "expected a byte count, seconds and a rate, found %q", strings.TrimSpace(line))
		}
		d := &result.Direction{Bytes: nbytes, Runtime: time.Duration(secs * float64(time.Second))}
		// bytes/seconds is more precise than dd's rounded rate.
		if secs > 0 {
			d.BytesPerSec = float64(nbytes) / secs
		} else {
			d.BytesPerSec = rate * f
		}
		if records > 0 {
			d.TotalIOs = records
			if secs > 0 {
				d.IOPS = float64(records) / secs
			}
		}
		r := ddResult(args, d)
		r.DisplayUnits = map[string]string{result.MetricBW: m[4] + "/s"}
		p.add(r, n)
		p.rows++
		args, records = nil, -1
	}
	if p.rows == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, errAt(1, 0, "expected dd's summary line (\"N bytes (...) copied, S s, R MB/s\"), found none")
	}
	return p, nil
}

func ddArgs(cmd string) map[string]string {
	out := map[string]string{}
	for _, a := range strings.Fields(cmd) {
		if k, v, ok := strings.Cut(a, "="); ok {
			out[k] = v
		}
		if a == "#" || a == "|" || a == ";" || a == "&&" {
			break
		}
	}
	return out
}

func ddResult(args map[string]string, d *result.Direction) result.Result {
	var r result.Result
	if args == nil {
		r.Write = d
		r.Workload = "dd-write"
		r.Method = "dd, command line not in the output: direction, block size and flags unknown (recorded as a write)"
		return r
	}
	flags := func(key string) map[string]bool {
		out := map[string]bool{}
		for _, f := range strings.Split(args[key], ",") {
			out[f] = true
		}
		return out
	}
	iflag, oflag, conv := flags("iflag"), flags("oflag"), flags("conv")
	bs := int64(512)
	if v, ok := args["bs"]; ok {
		bs, _ = ddSize(v)
	} else if v, ok := args["obs"]; ok {
		bs, _ = ddSize(v)
	}
	of, ifile := args["of"], args["if"]
	read := of == "/dev/null" || (of == "" && ifile != "" && !strings.HasPrefix(ifile, "/dev/zero"))
	m := Method{BlockSize: bs, IODepth: 1}
	if read {
		m.RW = "read"
		m.Direct = ptr(iflag["direct"])
		r.Read = d
		r.Target = ifile
	} else {
		m.RW = "write"
		m.Direct = ptr(oflag["direct"])
		m.Sync = oflag["dsync"] || oflag["sync"]
		m.EndFsync = conv["fsync"] || conv["fdatasync"]
		r.Write = d
		r.Target = of
	}
	if r.Target == "/dev/null" || r.Target == "/dev/zero" {
		r.Target = ""
	}
	r.Workload, _ = Workload(m)
	var parts []string
	for _, k := range []string{"if", "of", "bs", "count", "iflag", "oflag", "conv"} {
		if v, ok := args[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	r.Method = "dd " + strings.Join(parts, " ") + " (" + m.Describe() + ")"
	return r
}

// ddSize reads dd's sizes: 4k, 1M, 1MB (decimal), 512, 2x512.
func ddSize(s string) (int64, bool) {
	if a, b, ok := strings.Cut(s, "x"); ok {
		x, ok1 := ddSize(a)
		y, ok2 := ddSize(b)
		return x * y, ok1 && ok2
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "kB"):
		mult, s = 1000, strings.TrimSuffix(s, "kB")
	case strings.HasSuffix(s, "MB"):
		mult, s = 1000*1000, strings.TrimSuffix(s, "MB")
	case strings.HasSuffix(s, "GB"):
		mult, s = 1000*1000*1000, strings.TrimSuffix(s, "GB")
	default:
		s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "i")
		if n := len(s); n > 0 {
			switch s[n-1] {
			case 'c':
				mult = 1
			case 'w':
				mult = 2
			case 'b':
				mult = 512
			case 'k', 'K':
				mult = 1 << 10
			case 'M':
				mult = 1 << 20
			case 'G':
				mult = 1 << 30
			case 'T':
				mult = 1 << 40
			}
			if s[n-1] < '0' || s[n-1] > '9' {
				s = s[:n-1]
			}
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v > 1<<40 {
		return 512, false
	}
	return v * mult, true
}

// decimal reads a number written with a decimal point or a decimal comma.
func decimal(s string) (float64, error) {
	return strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
}

// parseHdparm reads hdparm's timing lines (-t, -T, --direct). hdparm's
// "MB" is 2^20 bytes. The device comes from hdparm's "/dev/sda:" line or
// the command line before it.
func parseHdparm(data []byte) (*parsed, error) {
	p := &parsed{tool: "hdparm"}
	device := ""
	var firstErr *ParseError
	for i, line := range lines(data) {
		n := i + 1
		if m := reHdparmDevice.FindStringSubmatch(line); m != nil {
			device = m[1]
			continue
		}
		if m := reHdparmCmd.FindStringSubmatch(line); m != nil && !strings.Contains(line, "Timing") {
			for _, a := range strings.Fields(m[1]) {
				if strings.HasPrefix(a, "/dev/") {
					device = a
				}
			}
			continue
		}
		if !strings.Contains(line, "Timing ") {
			continue
		}
		m := reHdparmTiming.FindStringSubmatch(line)
		if m == nil {
			// Prose about hdparm in notes; a garbled line is reported.
			if firstErr == nil {
				firstErr = errAt(n, 0, "expected an hdparm timing line such as \"Timing O_DIRECT disk reads: 406 MB in 3.01 seconds = 134.99 MB/sec\", found %q", strings.TrimSpace(line))
			}
			p.skipped = append(p.skipped, n)
			continue
		}
		mb, err1 := strconv.ParseInt(m[3], 10, 64)
		secs, err2 := decimal(m[4])
		rate, err3 := decimal(m[5])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errAt(n, 0, "expected MB, seconds and a rate, found %q", strings.TrimSpace(line))
		}
		unit := "MiB/s"
		bps := rate * (1 << 20)
		if m[6] == "k" {
			unit, bps = "KiB/s", rate*(1<<10)
		}
		d := &result.Direction{BytesPerSec: bps, Bytes: mb << 20, Runtime: time.Duration(secs * float64(time.Second))}
		d.IOPS = bps / (2 << 20) // hdparm reads 2 MiB per call
		direct := m[1] != ""
		r := result.Result{Read: d, Target: device, DisplayUnits: map[string]string{result.MetricBW: unit}}
		switch {
		case m[2] == "cached" && direct:
			r.Workload = "hdparm-direct-cached-read"
			r.Method = "hdparm -T --direct: repeated O_DIRECT reads of the drive's first 2 MiB (its cache and the bus, not the media)"
		case m[2] == "cached":
			r.Workload = "hdparm-cached-read"
			r.Method = "hdparm -T: reads from the Linux page cache (memory and CPU speed, not the drive)"
		default:
			r.Workload, _ = Workload(Method{RW: "read", BlockSize: 2 << 20, IODepth: 1, Direct: ptr(direct)})
			r.Method = fmt.Sprintf("hdparm -t%s: sequential 2 MiB reads from the start of the device, QD1, %s, about 3 s", map[bool]string{true: " --direct", false: ""}[direct],
				map[bool]string{true: "O_DIRECT", false: "through the page cache after flushing it"}[direct])
		}
		p.add(r, n)
		p.rows++
	}
	if p.rows == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, errAt(1, 0, "expected hdparm timing lines (\"Timing buffered disk reads: ...\"), found none")
	}
	return p, nil
}
