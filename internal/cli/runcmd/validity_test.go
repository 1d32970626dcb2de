package runcmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/engine"
)

func TestMeasurementFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		err   string
		check func(t *testing.T, p *engine.Plan)
	}{
		{"repeat auto", []string{"--repeat", "auto", "--precision", "2.5", "--repeat-max", "20"}, "", func(t *testing.T, p *engine.Plan) {
			if a := p.Measurement.RepeatAuto; a == nil || a.Precision != 0.025 || a.Min != 3 || a.Max != 20 || p.Repeat != 1 {
				t.Errorf("repeat auto %+v, repeat %d", a, p.Repeat)
			}
		}},
		{"repeat count", []string{"--repeat", "3"}, "", func(t *testing.T, p *engine.Plan) {
			if p.Repeat != 3 || p.Measurement.RepeatAuto != nil {
				t.Errorf("repeat %d %+v", p.Repeat, p.Measurement.RepeatAuto)
			}
		}},
		{"repeat nonsense", []string{"--repeat", "often"}, `"often" is neither a count nor auto`, nil},
		{"precision without auto", []string{"--precision", "3"}, "--precision belongs to --repeat auto", nil},
		{"bad precision", []string{"--repeat", "auto", "--precision", "0"}, "between 0 and 100", nil},
		{"bad counts", []string{"--repeat", "auto", "--repeat-min", "1"}, "at least 2 runs", nil},
		{"until stable", []string{"--until-stable", "--stable-max", "2m", "--stable-interval", "2s"}, "", func(t *testing.T, p *engine.Plan) {
			for _, w := range p.Suite.Workloads {
				ss := w.SteadyState
				if ss == nil || time.Duration(ss.MaxRuntime) != 2*time.Minute || time.Duration(ss.Interval) != 2*time.Second || ss.Criterion() != "iops_slope:0.5%" {
					t.Errorf("%s: %+v", w.Name, ss)
				}
			}
		}},
		{"stable flags alone", []string{"--stable-max", "2m"}, "belong to --until-stable", nil},
		{"odd interval", []string{"--until-stable", "--stable-interval", "3s"}, "whole number of intervals", nil},
		{"short max", []string{"--until-stable", "--stable-max", "10s"}, "leaves no time", nil},
		{"defeat cache", []string{"--defeat-cache", "--label", "mem_bytes=1073741824"}, "", func(t *testing.T, p *engine.Plan) {
			if !p.Measurement.DropCaches {
				t.Error("no page-cache drop")
			}
			for _, w := range p.Suite.Workloads {
				want := int64(1 << 30)
				if w.CacheProne() {
					want = 1280 << 20
				}
				if int64(w.FileSize) != want {
					t.Errorf("%s: size %s, want %d", w.Name, w.FileSize, want)
				}
			}
		}},
		{"defeat cache bad label", []string{"--defeat-cache", "--label", "mem_bytes=lots"}, "give the memory in bytes", nil},
		{"precondition needs destructive", []string{"--precondition"}, "needs --destructive", nil},
		{"precondition", []string{"--precondition", "--destructive", "/dev/loop9"}, "", func(t *testing.T, p *engine.Plan) {
			if !p.Measurement.Precondition {
				t.Error("precondition off")
			}
		}},
		{"fio job", []string{"--until-stable", "--fio-job", "testdata/job.fio"}, "a --fio-job runs as written", nil},
		{"auto in the contention round", []string{"--repeat", "auto", "--round", "contention"}, "apply to isolated rounds", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &flags{suite: "standard", telemetry: true, round: "isolated", targets: []string{"/tmp"}}
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			addMeasureFlags(fs, f)
			fs.StringArrayVarP(&f.labels, "label", "l", nil, "")
			fs.StringArrayVar(&f.destructive, "destructive", nil, "")
			fs.StringVar(&f.fioJob, "fio-job", "", "")
			fs.StringVar(&f.round, "round", "isolated", "")
			args := tt.args
			if i := slices.Index(args, "--fio-job"); i >= 0 {
				job := filepath.Join(t.TempDir(), "job.fio")
				if err := os.WriteFile(job, []byte("[a]\nrw=read\nsize=1M\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(slices.Clone(args[:i+1]), job)
			}
			if err := fs.Parse(args); err != nil {
				if tt.err != "" && strings.Contains(err.Error(), tt.err) {
					return
				}
				t.Fatalf("parsing flags: %v", err)
			}
			f.changed = fs.Changed
			plan, err := buildPlan(f, false)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, plan)
		})
	}
}
