package safety

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/fio"
)

// stubFacts answers for one blank device; stubStat knows a few paths.
type stubFacts struct{ dev *Device }

func (f stubFacts) Device(_ context.Context, path string) (*Device, error) {
	if f.dev == nil || path != f.dev.Path {
		return nil, errors.New("not a device")
	}
	return f.dev, nil
}

func stubStat(kinds map[string]PathKind) Stat {
	return func(_ context.Context, p string) (PathKind, error) { return kinds[p], nil }
}

func TestJudgeJobs(t *testing.T) {
	const work = "/srv/t/storbench-1"
	kinds := map[string]PathKind{"/dev/sdz": PathBlock, "/dev/null": PathChar, "/etc/passwd": PathRegular, "/srv/t": PathDir}
	blank := &Device{Path: "/dev/sdz", Name: "sdz"}
	cases := []struct {
		name        string
		opts        map[string]string
		destructive []string
		want        string // substring of the refusal; "" means allowed
	}{
		{"relative file", map[string]string{"filename": "a.dat", "rw": "write"}, nil, ""},
		{"default names", map[string]string{"rw": "randwrite"}, nil, ""},
		{"subdir", map[string]string{"directory": "sub", "filename": "a", "rw": "write"}, nil, ""},
		{"read device", map[string]string{"filename": "/dev/sdz", "rw": "randread"}, nil, ""},
		{"write device not named", map[string]string{"filename": "/dev/sdz", "rw": "write"}, nil, "--destructive"},
		{"directory joins", map[string]string{"directory": "/dev", "filename": "sdz", "rw": "trimwrite"}, nil, "--destructive"},
		{"directory prefixes absolute names", map[string]string{"directory": "sub", "filename": "/dev/sdz", "rw": "write"}, nil, ""},
		{"escape", map[string]string{"filename": "../../../dev/sdz", "rw": "write"}, nil, "--destructive"},
		{"colon list", map[string]string{"filename": "a:/dev/sdz", "rw": "randrw"}, nil, "--destructive"},
		{"escaped colon is a name", map[string]string{"filename": `a\:/dev/sdz`, "rw": "write"}, nil, ""},
		{"directory list", map[string]string{"directory": "x:/dev", "filename": "sdz", "rw": "write"}, nil, "--destructive"},
		{"rw suffix", map[string]string{"filename": "/dev/sdz", "rw": "randwrite:8"}, nil, "--destructive"},
		{"unlink counts as writing", map[string]string{"filename": "/dev/sdz", "rw": "read", "unlink": "1"}, nil, "--destructive"},
		{"writing engine", map[string]string{"filename": "/dev/sdz", "ioengine": "filedelete"}, nil, "--destructive"},
		{"outside regular file", map[string]string{"filename": "/etc/passwd", "rw": "read"}, nil, "did not create"},
		{"outside missing file", map[string]string{"filename": "/srv/t/new", "rw": "write"}, nil, "would create"},
		{"char device", map[string]string{"filename": "/dev/null", "rw": "write"}, nil, "character device"},
		{"stdout", map[string]string{"filename": "-", "rw": "write"}, nil, "standard input"},
		{"format with slash", map[string]string{"filename_format": "../$jobname", "rw": "write"}, nil, "path separator"},
		{"name with slash", map[string]string{"name": "../../dev/sdz", "rw": "write"}, nil, "path separator"},
		{"opendir outside", map[string]string{"opendir": "/srv/t"}, nil, "opendir"},
		{"opendir inside", map[string]string{"opendir": "d"}, nil, ""},
		{"exec engine", map[string]string{"ioengine": "exec", "filename": "a"}, nil, "ioengine"},
		{"external engine", map[string]string{"ioengine": "external:/x.so", "filename": "a"}, nil, "ioengine"},
		{"net engine", map[string]string{"ioengine": "net", "filename": "a"}, nil, "ioengine"},
		{"prerun", map[string]string{"exec_prerun": "true", "filename": "a"}, nil, "runs a command"},
		{"postrun", map[string]string{"exec_postrun": "true", "filename": "a"}, nil, "runs a command"},
		{"replay", map[string]string{"read_iolog": "x.log", "filename": "a"}, nil, "replays"},
		{"replay redirect", map[string]string{"replay_redirect": "/dev/sdz", "filename": "a"}, nil, "redirects"},
		{"replay option", map[string]string{"replay_no_stall": "1", "filename": "a"}, nil, "replay"},
		{"iolog outside", map[string]string{"write_iolog": "/tmp/x", "filename": "a"}, nil, "write_iolog"},
		{"iolog inside", map[string]string{"write_iolog": "x.log", "filename": "a"}, nil, ""},
		{"bw log escape", map[string]string{"write_bw_log": "../../x", "filename": "a"}, nil, "write_bw_log"},
		{"scheduler", map[string]string{"ioscheduler": "none", "filename": "a"}, nil, "scheduler"},
		{"mmap file", map[string]string{"mem": "mmaphuge:/hugetlb/x", "filename": "a"}, nil, "maps a file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := JobCheck{Policy: Policy{Destructive: c.destructive}, Facts: stubFacts{dev: blank}, Stat: stubStat(kinds), WorkDir: work}
			judgeOne(t, check, c.opts, c.want)
		})
	}
}

// judgeOne judges one job "j" with opts and checks the verdict: allowed
// when want is "", else a refusal saying want.
func judgeOne(t *testing.T, check JobCheck, opts map[string]string, want string) {
	t.Helper()
	job := map[string]string{"name": "j"}
	for k, v := range opts {
		job[k] = v
	}
	_, err := check.Judge(context.Background(), []FioJob{{Name: "j", Options: job}})
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want != "" && err == nil:
		t.Fatalf("allowed, want a refusal naming %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("refusal %q does not name %q", err, want)
	}
}

// Named destructive does not override the in-use rules: a device with a
// signature is refused whatever the user passed.
func TestJudgeDeviceWithSignatureRefusedEvenNamed(t *testing.T) {
	dev := &Device{Path: "/dev/sdz", Name: "sdz", Signatures: []string{"ext4"}, Signature: "ext4"}
	check := JobCheck{Policy: Policy{Destructive: []string{"/dev/sdz"}}, Facts: stubFacts{dev: dev},
		Stat: stubStat(map[string]PathKind{"/dev/sdz": PathBlock}), WorkDir: "/w"}
	_, err := check.Judge(context.Background(), []FioJob{{Name: "j", Options: map[string]string{"filename": "/dev/sdz", "rw": "write"}}})
	var r *Refusal
	if !errors.As(err, &r) || r.Rule != RuleInUse {
		t.Fatalf("got %v, want an in-use refusal", err)
	}
}

// Without facts (fio runs elsewhere) a device write is refused unless the
// runner owns the device.
func TestJudgeRemote(t *testing.T) {
	stat := stubStat(map[string]PathKind{"/dev/xvdb": PathBlock})
	jobs := []FioJob{{Name: "j", Options: map[string]string{"filename": "/dev/xvdb", "rw": "write"}}}
	if _, err := (JobCheck{Stat: stat, WorkDir: "/w"}).Judge(context.Background(), jobs); err == nil {
		t.Fatal("a remote device write without facts was allowed")
	}
	v, err := (JobCheck{Stat: stat, WorkDir: "/w", Owned: []string{"/dev/xvdb"}}).Judge(context.Background(), jobs)
	if err != nil {
		t.Fatalf("the runner's own volume was refused: %v", err)
	}
	if !reflect.DeepEqual(v.Writers, []string{"j"}) || len(v.Touches) != 1 || !v.Touches[0].Own {
		t.Fatalf("verdict %+v", v)
	}
}

func TestFioSplitList(t *testing.T) {
	cases := map[string][]string{
		"a":          {"a"},
		"a:b":        {"a", "b"},
		`a\:b:c`:     {"a:b", "c"},
		"::a::b:":    {"a", "b"},
		"/dev/x:rel": {"/dev/x", "rel"},
	}
	for in, want := range cases {
		if got := fio.SplitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestWrites(t *testing.T) {
	for rw, want := range map[string]bool{"": false, "read": false, "randread": false, "randread:4": false,
		"write": true, "randwrite": true, "rw": true, "readwrite": true, "randrw": true, "trim": true, "randtrim": true, "trimwrite": true, "randtrimwrite": true} {
		if got := Writes(map[string]string{"rw": rw}); got != want {
			t.Errorf("rw=%s: Writes %v, want %v", rw, got, want)
		}
	}
}
