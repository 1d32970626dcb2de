package spec

import (
	"strings"
	"testing"
	"time"
)

func TestBuiltinsLoadAndMatchTheIssue(t *testing.T) {
	for _, n := range BuiltinNames {
		s, err := Builtin(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if s.Name != n || len(s.Workloads) == 0 {
			t.Errorf("%s: name %q, %d workloads", n, s.Name, len(s.Workloads))
		}
	}
	std, _ := Builtin("standard")
	if len(std.Workloads) != 6 || time.Duration(std.Workloads[0].Ramp) != 2*time.Second || time.Duration(std.Workloads[0].Runtime) != 10*time.Second || std.Workloads[0].FileSize != 1<<30 {
		t.Errorf("standard: %+v", std.Workloads[0])
	}
	etcd, _ := Builtin("etcd")
	w := etcd.Workloads[0]
	if w.BlockSize != 2300 || *w.Fdatasync != 1 || w.IOEngine != "sync" || w.FileSize != 22<<20 || w.Runtime != 0 {
		t.Errorf("etcd: %+v", w)
	}
	mixed, _ := Builtin("mixed")
	if m := mixed.Workloads[0]; *m.NumJobs != 4 || *m.IODepth != 32 || *m.RWMixRead != 50 || time.Duration(m.Runtime) != time.Minute {
		t.Errorf("mixed: %+v", m)
	}
	quick, _ := Builtin("quick")
	if quick.MaxFileSize() != 64<<20 || quick.Duration() != 12*time.Second {
		t.Errorf("quick: %d bytes, %s", quick.MaxFileSize(), quick.Duration())
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "quick, standard") {
		t.Errorf("unknown suite error %v", err)
	}
}

func TestSizeString(t *testing.T) {
	if Size(1<<20).String() != "1MiB" || Size(2300).String() != "2300" {
		t.Error("Size.String")
	}
}

func TestValidationNamesFieldAndLine(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", "name: x\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    blocksize: 4\n", "mine.yaml:6: blocksize is not a workload option"},
		{"bad rw", "name: x\nworkloads:\n  - name: a\n    rw: sideways\n    bs: 4KiB\n", `mine.yaml:4: workloads[0].rw: "sideways" is not a fio access pattern`},
		{"missing rw", "name: x\nworkloads:\n  - name: a\n    bs: 4KiB\n", "mine.yaml:3: workloads[0].rw: is required"},
		{"bad size", "name: x\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    size: lots\n", `mine.yaml:6: "lots" is not a size`},
		{"bad duration", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, runtime: forever}\n", `mine.yaml:3: "forever" is not a duration`},
		{"iodepth type", "name: x\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    iodepth: deep\n", "mine.yaml:6: cannot unmarshal !!str `deep` into int"},
		{"iodepth range", "name: x\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    iodepth: 0\n", "mine.yaml:6: workloads[0].iodepth: 0 is out of range"},
		{"duplicate", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB}\n  - {name: a, rw: write, bs: 4KiB}\n", `mine.yaml:4: workloads[1].name: "a" is already the name of workloads[0]`},
		{"unaligned direct", "name: x\nworkloads:\n  - {name: a, rw: write, bs: 2300}\n", "workloads[0].bs: 2300 bytes is not a multiple of 512"},
		{"gtod_reduce", "name: x\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    extra:\n      gtod_reduce: \"1\"\n", "mine.yaml:7: workloads[0].extra.gtod_reduce: cannot be set"},
		{"no workloads", "name: x\nworkloads: []\n", "mine.yaml:2: workloads: the suite needs at least one workload"},
		{"no name", "workloads:\n  - {name: a, rw: read, bs: 4KiB}\n", "mine.yaml:1: name: is required"},
		{"ramp without runtime", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, ramp: 2s}\n", "workloads[0].ramp: a ramp needs a runtime"},
		{"not yaml", "name: [x\n", "mine.yaml:"},
		{"empty", "", "mine.yaml: empty suite file"},
		{"default applies to line", "name: x\ndefaults:\n  iodepth: -3\nworkloads:\n  - {name: a, rw: read, bs: 4KiB}\n", "mine.yaml:3: workloads[0].iodepth: -3 is out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "mine.yaml")
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestDefaultsApply(t *testing.T) {
	s, err := Parse([]byte("name: x\ndefaults:\n  size: 8MiB\n  runtime: 1s\n  iodepth: 4\nworkloads:\n  - {name: a, rw: read, bs: 4KiB}\n  - {name: b, rw: write, bs: 4KiB, iodepth: 1, direct: false}\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Workloads[0], s.Workloads[1]
	if a.FileSize != 8<<20 || *a.IODepth != 4 || !*a.Direct || a.IOEngine != "libaio" || *b.IODepth != 1 || *b.Direct {
		t.Errorf("a=%+v b=%+v", a.Options, b.Options)
	}
	if got := s.Writes(); len(got) != 1 || got[0] != "b" {
		t.Errorf("Writes = %v", got)
	}
	if err := s.Select([]string{"b"}); err != nil || len(s.Workloads) != 1 {
		t.Errorf("Select: %v", err)
	}
	if err := s.Select([]string{"zzz"}); err == nil || !strings.Contains(err.Error(), "no workload zzz") {
		t.Errorf("Select unknown: %v", err)
	}
}

// extra: takes tuning options only; anything else names the option and its
// line, in the workload or in defaults.
func TestExtraAllowlist(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"rw", "name: x\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    extra:\n      iodepth_batch: \"4\"\n      rw: write\n", "mine.yaml:8: workloads[0].extra.rw: is not a tuning option"},
		{"readwrite", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, extra: {readwrite: trimwrite}}\n", "mine.yaml:3: workloads[0].extra.readwrite: is not a tuning option"},
		{"exec", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, extra: {exec_prerun: 'rm -rf /'}}\n", "workloads[0].extra.exec_prerun: is not a tuning option"},
		{"engine", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, extra: {ioengine: exec}}\n", "workloads[0].extra.ioengine: is not a tuning option"},
		{"offset", "name: x\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, extra: {offset: 1g}}\n", "workloads[0].extra.offset"},
		{"in defaults", "name: x\ndefaults:\n  extra:\n    verify: crc32c\nworkloads:\n  - {name: a, rw: read, bs: 4KiB}\n", "mine.yaml:4: workloads[0].extra.verify"},
		{"job with options", "name: x\nworkloads:\n  - {name: a, job: spec_test.go, rw: write}\n", "mine.yaml:3: workloads[0].rw: a job workload runs its job file as it is"},
		{"job missing", "name: x\nworkloads:\n  - {name: a, job: nope.fio}\n", "workloads[0].job: stat nope.fio"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "mine.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
	ok := "name: x\ndefaults: {extra: {norandommap: \"1\"}}\nworkloads:\n  - {name: a, rw: randread, bs: 4KiB, extra: {random_distribution: zipf:1.2, rate_iops: \"500\", thinktime: 10us}}\n  - {name: b, job: spec_test.go}\n"
	s, err := Parse([]byte(ok), "mine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Workloads[0].Extra["norandommap"] != "1" || s.Workloads[1].Job != "spec_test.go" || !s.Workloads[1].Writes() {
		t.Errorf("parsed %+v", s.Workloads)
	}
}
