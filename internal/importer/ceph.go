package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/storbench/storbench/internal/result"
)

type cephBench struct {
	BytesWritten *float64 `json:"bytes_written"`
	BlockSize    *float64 `json:"blocksize"`
	ElapsedSec   *float64 `json:"elapsed_sec"`
	BytesPerSec  *float64 `json:"bytes_per_sec"`
	IOPS         *float64 `json:"iops"`
}

var reCephPrefix = regexp.MustCompile(`(?m)^\s*(osd\.\d+)\s*:\s*`)

// parseCeph reads "ceph tell osd.N bench" output: a single JSON object, or
// the "osd.0: {...} osd.1: {...}" concatenation "ceph tell osd.* bench"
// prints. Each OSD becomes a target named osd.N.
func parseCeph(data []byte) (*parsed, error) {
	p := &parsed{tool: "ceph"}
	type part struct {
		target string
		start  int
	}
	var parts []part
	if locs := reCephPrefix.FindAllSubmatchIndex(data, -1); len(locs) > 0 {
		for _, l := range locs {
			parts = append(parts, part{string(data[l[2]:l[3]]), l[1]})
		}
	} else {
		start := bytes.IndexByte(data, '{')
		if start < 0 {
			return nil, errAt(1, 0, "expected ceph osd bench JSON ({\"bytes_written\": ...}), found none")
		}
		parts = append(parts, part{"", start})
	}
	for _, pt := range parts {
		if pt.start >= len(data) || data[pt.start] != '{' {
			l, c := lineCol(data, pt.start)
			return nil, errAt(l, c, "expected a JSON object after %q", pt.target+":")
		}
		dec := json.NewDecoder(bytes.NewReader(data[pt.start:]))
		var w struct {
			cephBench
			// crimson's osd bench keeps its figures in a named section.
			Results *cephBench `json:"osd_bench_results"`
		}
		if err := dec.Decode(&w); err != nil {
			return nil, jsonError(data, pt.start, err, "ceph osd bench JSON")
		}
		b := w.cephBench
		if w.Results != nil {
			b = *w.Results
		}
		line := lineOf(data, pt.start)
		if b.BytesPerSec == nil || b.BlockSize == nil || b.BytesWritten == nil {
			return nil, errAt(line, 0, "expected bytes_written, blocksize and bytes_per_sec in the ceph osd bench object")
		}
		if *b.BytesPerSec < 0 || *b.BlockSize <= 0 || *b.BytesWritten < 0 || *b.BlockSize > 1<<40 {
			return nil, errAt(line, 0, "expected positive bytes_written, blocksize and bytes_per_sec, found %g, %g, %g", *b.BytesWritten, *b.BlockSize, *b.BytesPerSec)
		}
		d := &result.Direction{BytesPerSec: *b.BytesPerSec, Bytes: int64(*b.BytesWritten)}
		d.TotalIOs = int64(*b.BytesWritten / *b.BlockSize)
		if b.IOPS != nil {
			d.IOPS = *b.IOPS
		} else {
			d.IOPS = *b.BytesPerSec / *b.BlockSize
		}
		if b.ElapsedSec != nil {
			d.Runtime = time.Duration(*b.ElapsedSec * float64(time.Second))
		}
		bs := int64(*b.BlockSize)
		r := result.Result{Target: pt.target, Write: d, DisplayUnits: map[string]string{result.MetricBW: "MB/s"}}
		if bs == 4<<20 {
			r.Workload = "seq-write-4m"
		} else {
			r.Workload = "ceph-osd-bench-" + sizeName(bs)
		}
		r.Method = fmt.Sprintf("ceph tell %s bench: %s written in %s writes through the OSD's object store (BlueStore), not raw fio",
			orDefault(pt.target, "osd.N"), sizeName(int64(*b.BytesWritten)), sizeName(bs))
		p.results = append(p.results, r)
		p.rows++
	}
	return p, nil
}
