package fio

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/testenv"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// sectionsOf renders a job file as "[name] line | line" strings.
func sectionsOf(f *JobFile) []string {
	var out []string
	for _, s := range f.Sections {
		var lines []string
		for _, l := range s.Lines {
			lines = append(lines, l.Text)
		}
		out = append(out, "["+s.Name+"] "+strings.Join(lines, " | "))
	}
	return out
}

func TestReadJobFileAsFioReadsIt(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  []string
	}{
		{"inline comments", map[string]string{"j.fio": "[j]\nrw=randread ; same as read here\nbs=4k # block\n  ; indented comment\n#x\n"},
			nil, []string{"[j] rw=randread | bs=4k"}},
		{"global name", map[string]string{"j.fio": "[global]\nname=x\nrw=read\n[a]\n"}, nil, []string{"[global] name=x | rw=read", "[a] "}},
		{"include beside the file", map[string]string{"j.fio": "[j]\ninclude sub/common.fio\nbs=4k\n", "sub/common.fio": "rw=write\ninclude more.fio\n", "sub/more.fio": "iodepth=4\n"},
			nil, []string{"[j] rw=write | iodepth=4 | bs=4k"}},
		{"env", map[string]string{"j.fio": "[j]\nfilename=${DEV}\nsize=${UNSET}1m\n${KEY}=read\n"}, map[string]string{"DEV": "/tmp/x", "KEY": "rw"},
			[]string{"[j] filename=/tmp/x | size=1m | rw=read"}},
		{"global prefix", map[string]string{"j.fio": "[globalx]\nrw=write\n[j]\n"}, nil, []string{"[globalx] rw=write", "[j] "}},
		{"cr lf", map[string]string{"j.fio": "[j]\r\nrw=read\r\n"}, nil, []string{"[j] rw=read"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, c.files)
			f, err := ReadJobFile(filepath.Join(dir, "j.fio"), ReadOptions{Getenv: env(c.env)})
			if err != nil {
				t.Fatal(err)
			}
			if got := sectionsOf(f); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestReadJobFileErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"option before section", map[string]string{"j.fio": "rw=read\n[j]\n"}, "j.fio:1: option \"rw=read\" stands outside"},
		{"only global", map[string]string{"j.fio": "[global]\nrw=read\n"}, "no job section"},
		{"section in include", map[string]string{"j.fio": "[j]\ninclude i.fio\n", "i.fio": "[k]\n"}, "i.fio:1: an included file may hold no sections"},
		{"missing include", map[string]string{"j.fio": "[j]\n\ninclude nope.fio\n"}, "j.fio:3: include nope.fio"},
		{"include cycle", map[string]string{"j.fio": "[j]\ninclude i.fio\n", "i.fio": "include i.fio\n"}, "nest deeper"},
		{"keyword shell", map[string]string{"j.fio": "[j]\nsize=$ncpus';touch x;'\n"}, "j.fio:2: \"size=$ncpus'\" uses a fio keyword"},
		{"env holding a variable", map[string]string{"j.fio": "[j]\nfilename=${NESTED}\n"}, "${NESTED} expands to"},
		{"bad header", map[string]string{"j.fio": "[j\nrw=read\n"}, "j.fio:1: section header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, c.files)
			_, err := ReadJobFile(filepath.Join(dir, "j.fio"), ReadOptions{Getenv: env(map[string]string{"NESTED": "${X}"})})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestFillRunnerDefaults(t *testing.T) {
	// A job whose engine does no I/O gets neither file nor size: fio runs
	// it without.
	text := "[global]\nrw=read\n[bare]\n[sized]\nsize=4m\n[named]\nfilename=x\n[cpu]\nioengine=cpuio\ncpuload=50\n"
	for _, c := range []struct {
		device bool
		want   []string
	}{
		{false, []string{"[global] rw=read", "[bare] filename=t.dat | size=1048576", "[sized] size=4m", "[named] filename=x", "[cpu] ioengine=cpuio | cpuload=50"}},
		{true, []string{"[global] rw=read", "[bare] filename=/dev/sdz | size=1048576", "[sized] size=4m | filename=/dev/sdz", "[named] filename=x", "[cpu] ioengine=cpuio | cpuload=50"}},
	} {
		f, err := ParseJobText([]byte(text), "j.fio", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		name := "t.dat"
		if c.device {
			name = "/dev/sdz"
		}
		f.FillRunnerDefaults(File{Name: name, Size: 1 << 20}, c.device)
		if got := sectionsOf(f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("device=%v: got %q\nwant %q", c.device, got, c.want)
		}
	}
}

// fio's own reading, laid over the file: [global] sections in the middle,
// aliases, name= in [global], repeated options (last wins, in fio's order).
func TestReadingIsFiosOwn(t *testing.T) {
	testenv.Fio(t)
	text := "[global]\nname=g\nreadwrite=write\nsize=1m\n[a]\nrw=read\nrw=randread\nfilename=x:y\n[global]\nbs=8k\n[b]\nname=bee\nfilename=z\nfilename=w\n"
	dir := writeFiles(t, map[string]string{"j.fio": text})
	f, err := ReadJobFile(filepath.Join(dir, "j.fio"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := Runner{Cmder: execx.Local{}, Dir: dir}.Read(context.Background(), f, "j.fio")
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"name": "a", "rw": "randread", "size": "1m", "filename": "x:y"},
		{"name": "bee", "rw": "write", "size": "1m", "bs": "8k", "filename": "w"},
	}
	if len(rd.Jobs) != 2 {
		t.Fatalf("%d jobs", len(rd.Jobs))
	}
	for i, j := range rd.Jobs {
		if got := j.Values(); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("job %s: %v, want %v", j.Section, got, want[i])
		}
	}
}

func TestReadRefusesInFiosWords(t *testing.T) {
	testenv.Fio(t)
	dir := writeFiles(t, map[string]string{"j.fio": "[j]\nfilename=x\n; a comment\nrw=sideways\n", "k.fio": "[k]\nbogus_option=1\n"})
	for name, want := range map[string]string{"j.fio": "j.fio:4: fio refuses the job: fio: failed parsing rw=sideways", "k.fio": "k.fio:2: fio refuses the job"} {
		f, err := ReadJobFile(filepath.Join(dir, name), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Runner{Cmder: execx.Local{}, Dir: dir}.Read(context.Background(), f, name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

// A value holding " --" would make fio's printed reading ambiguous.
func TestParseShowcmdRefusesAmbiguity(t *testing.T) {
	f, err := ParseJobText([]byte("[j]\ndescription=a --filename=/dev/sda\n"), "j.fio", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseShowcmd("fio --name=j --description=\"a --filename=/dev/sda\" \n", f); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("error %v", err)
	}
}

// Absolute regular files move below the work directory; devices and /dev
// directories stay for the safety owner to judge.
func TestRelocate(t *testing.T) {
	text := "[j]\nfilename=/tmp/a:rel:/dev/sdz\ndirectory=/scratch\n[k]\ndirectory=/dev\nfilename=sdz\n[l]\nfilename=/\n"
	f, err := ParseJobText([]byte(text), "j.fio", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := f.Relocate(func(p string) bool { return p == "/dev/sdz" })
	want := []string{"[j] filename=tmp/a:rel:/dev/sdz | directory=scratch", "[k] directory=/dev | filename=sdz", "[l] filename=."}
	if got := sectionsOf(f); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if len(changed) != 3 || changed[0].Was != "filename=/tmp/a:rel:/dev/sdz" {
		t.Errorf("changed %+v", changed)
	}
	if !strings.Contains(string(f.Render()), `; changed by storbench from "directory=/scratch" (j.fio:3)`) {
		t.Errorf("render does not say what changed:\n%s", f.Render())
	}
	if !f.Mentions("/dev/") || f.Mentions("/scratch") {
		t.Error("Mentions")
	}
}
