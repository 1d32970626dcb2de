package fiotest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
)

func TestAnswers(t *testing.T) {
	raw := Recorded(t, "libaio-randread.json")
	for _, tc := range []struct {
		name     string
		fake     *Fio
		args     []string
		want     string
		exitCode int // of the *execx.RunError; 0: no error
	}{
		{"version", &Fio{}, []string{"fio", "--version"}, DefaultVersion + "\n", 0},
		{"own version", &Fio{Version: "fio-3.38"}, []string{"fio", "--version"}, "fio-3.38\n", 0},
		{"libaio loads", &Fio{}, []string{"fio", "--enghelp=libaio"}, "", 0},
		{"no libaio", &Fio{NoLibaio: true}, []string{"fio", "--enghelp=libaio"}, "", 1},
		{"psync without libaio", &Fio{NoLibaio: true}, []string{"fio", "--enghelp=psync"}, "", 0},
		{"a job replays the record", &Fio{JSON: raw}, []string{"fio", "--output-format=json", "job.fio"}, string(raw), 0},
		{"behind a wrapper", &Fio{JSON: raw}, []string{"nice", "-n", "5", "fio", "job.fio"}, string(raw), 0},
		{"not fio: silent", &Fio{}, []string{"rm", "-f", "x"}, "", 0},
		{"not fio: Other", &Fio{Other: func(args []string, w io.Writer) error {
			_, err := io.WriteString(w, strings.Join(args, " "))
			return err
		}}, []string{"cat", "/proc/meminfo"}, "cat /proc/meminfo", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := tc.fake.Command(context.Background(), tc.args[0], tc.args[1:]...).SetStdout(&out).Run()
			var re *execx.RunError
			switch {
			case tc.exitCode == 0 && err != nil:
				t.Fatalf("error %v", err)
			case tc.exitCode != 0 && (!errors.As(err, &re) || re.ExitCode != tc.exitCode):
				t.Fatalf("error %v, want exit code %d", err, tc.exitCode)
			}
			if out.String() != tc.want {
				t.Errorf("printed %.80q, want %.80q", out.String(), tc.want)
			}
		})
	}
}

// The replayed record parses as fio's output, and every fio command line
// is recorded from the word fio on.
func TestReplayParsesAndRecords(t *testing.T) {
	f := &Fio{JSON: Recorded(t, "libaio-randread.json")}
	var out bytes.Buffer
	if err := f.Command(context.Background(), "sudo", "fio", "--output-format=json", "j.fio").SetStdout(&out).Run(); err != nil {
		t.Fatal(err)
	}
	docs, _, _, err := fio.ParseOutputs(&out)
	if err != nil || len(docs) != 1 || len(docs[0].AllJobs()) == 0 {
		t.Fatalf("the replayed record: %d documents, %v", len(docs), err)
	}
	if calls := f.Calls(); len(calls) != 1 || strings.Join(calls[0], " ") != "fio --output-format=json j.fio" {
		t.Errorf("calls %q", calls)
	}
}

// A blocked job says it started and ends with its context.
func TestBlockEndsWithTheContext(t *testing.T) {
	f := &Fio{Block: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Command(ctx, "fio", "j.fio").Run() }()
	<-f.Started()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the context's", err)
	}
}
