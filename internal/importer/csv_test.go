package importer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// TestGenericTime: a row's time column (CSV) or field (JSON) is when its
// figure was measured; rows of different times are different results,
// each time's repetitions counted from 1.
func TestGenericTime(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, 2+d, 3, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name    string
		file    string
		results int
		check   func(t *testing.T, rs []result.Result)
	}{
		{"csv", "backfill/history.csv", 17, func(t *testing.T, rs []result.Result) {
			byTime := map[time.Time][]result.Result{}
			for _, r := range rs {
				at, ok := MeasuredAt(&r)
				if !ok || !r.Started.Equal(at) {
					t.Fatalf("%s rep %d: measured %v %v, started %v", r.Workload, r.Repetition, at, ok, r.Started)
				}
				byTime[at.UTC()] = append(byTime[at.UTC()], r)
			}
			if len(byTime) != 16 {
				t.Errorf("%d times, want 16", len(byTime))
			}
			night := byTime[day(5)]
			if len(night) != 2 || night[0].Repetition != 1 || night[1].Repetition != 2 {
				t.Fatalf("2026-03-07: %+v, want repetitions 1 and 2", night)
			}
			if v, ok := night[0].Metric(result.MetricLatP99); !ok || v <= 0 || night[0].Write.IOPS <= 0 {
				t.Errorf("repetition 1 holds IOPS %v and p99 %v", night[0].Write.IOPS, v)
			}
			if _, ok := night[1].Metric(result.MetricLatP99); ok {
				t.Errorf("repetition 2 has a p99 of its own; only the first row of that night gave one")
			}
			last := byTime[day(15)][0]
			if last.Write.IOPS > 8000 || last.Labels["bay"] != "2" {
				t.Errorf("last night: %v IOPS, labels %v", last.Write.IOPS, last.Labels)
			}
		}},
		{"json with an offset", "backfill/history.json", 10, func(t *testing.T, rs []result.Result) {
			want := time.Date(2026, 3, 2, 2, 30, 0, 0, time.UTC)
			if at, ok := MeasuredAt(&rs[0]); !ok || !at.Equal(want) || rs[0].Repetition != 1 || rs[1].Repetition != 1 {
				t.Errorf("first: %v %v, repetitions %d %d", at, ok, rs[0].Repetition, rs[1].Repetition)
			}
		}},
		{"csv without a time", "results.csv", 6, func(t *testing.T, rs []result.Result) {
			for _, r := range rs {
				if at, ok := MeasuredAt(&r); ok || !r.Started.IsZero() {
					t.Errorf("%s: measured %v", r.Workload, at)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := parseFile(t, tc.file, Options{})
			if len(f.Results) != tc.results {
				t.Fatalf("%d results, want %d", len(f.Results), tc.results)
			}
			tc.check(t, f.Results)
			// The streamed CSV path gives the same results.
			if filepath.Ext(tc.file) != ".csv" {
				return
			}
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var streamed []result.Result
			if _, err := Stream(tc.file, bytes.NewReader(data), Options{}, func(r result.Result) error {
				streamed = append(streamed, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			tc.check(t, streamed)
		})
	}

	// Other formats keep their own times and are not "measured at".
	fio := parseFile(t, "fio-randread-4k-qd32.json", Options{})
	if _, ok := MeasuredAt(&fio.Results[0]); ok || fio.Results[0].Started.IsZero() {
		t.Errorf("fio result: measured-at %v, started %v", ok, fio.Results[0].Started)
	}
}

func TestGenericBadTime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		format    Format
		data      string
		line, col int
	}{
		{"csv date only", CSV, "target,workload,metric,value,unit,time\npi,seq-read,bw,1,MB/s,2026-03-02T03:00:00Z\npi,seq-read,bw,1,MB/s,2026-03-03\n", 3, 23},
		{"csv words", CSV, "time,target,workload,metric,value,unit\nyesterday,pi,seq-read,bw,1,MB/s\n", 2, 1},
		{"json", JSON, "[\n {\"target\": \"pi\", \"workload\": \"w\", \"metric\": \"bw\", \"value\": 1, \"unit\": \"MB/s\",\n  \"time\": \"03/02/2026\"}]", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("backfill.txt", []byte(tc.data), Options{Format: tc.format})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a ParseError", err)
			}
			if pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(pe.Msg, "expected a time in RFC 3339") ||
				!strings.HasPrefix(err.Error(), "backfill.txt:") {
				t.Errorf("%v (line %d col %d), want line %d col %d", err, pe.Line, pe.Column, tc.line, tc.col)
			}
		})
	}
}

// Every text input of the generic import is bounded, and the error names
// the bound.
func TestGenericBounds(t *testing.T) {
	head := "target,labels,workload,metric,value,unit\n"
	long := strings.Repeat("x", 64)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"csv line", head + "ssd,,w,iops," + strings.Repeat("1", MaxCSVLine+10) + ",IOPS\n", "longer than 1048576 bytes"},
		{"csv target", head + strings.Repeat("t", MaxName+1) + ",,w,iops,1,IOPS\n", "at most 256 bytes"},
		{"csv label value", head + "ssd,storage=" + long + ",w,iops,1,IOPS\n", "more than the 63 a label value may hold"},
		{"csv label key", head + "ssd,my key=v,w,iops,1,IOPS\n", "label key \"my key\""},
		{"json workload", `[{"target": "ssd", "workload": "` + strings.Repeat("w", MaxName+1) + `", "metric": "iops", "value": 1, "unit": "IOPS"}]`, "at most 256 bytes"},
		{"json label value", `[{"target": "ssd", "labels": {"storage": "` + long + `"}, "workload": "w", "metric": "iops", "value": 1, "unit": "IOPS"}]`, "63"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			format := CSV
			if strings.HasPrefix(tc.data, "[") {
				format = JSON
			}
			_, err := Parse("in", []byte(tc.data), Options{Format: format})
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 1000 {
				msg := fmt.Sprint(err)
				if len(msg) > 300 {
					msg = msg[:300] + "..."
				}
				t.Errorf("got %s (%d bytes), want a short error saying %q", msg, len(fmt.Sprint(err)), tc.want)
			}
		})
	}
	if _, err := Parse("in", []byte(head+"ssd,storage=nvme;node=pi4-1,w,iops,1,IOPS\n"), Options{Format: CSV}); err != nil {
		t.Errorf("labels within the bounds: %v", err)
	}
}
