package runcmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
)

// runCommand runs the run command with args on a database in a new
// directory and returns stdout, the database's path and the error.
func runCommand(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	db := filepath.Join(t.TempDir(), "r.db")
	cmd := NewCommand(cli.Deps{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Globals: &cli.Globals{DB: db}, Getenv: os.Getenv})
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), db, err
}

// The flags reach the library as a request: what it refuses is a usage
// error (exit 2) in the library's words, and no database is created.
func TestFlagsToRequest(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(inv, []byte("[pis]\npi01 ansible_host=127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"no target", nil, "no target: give --target DIR or --target /dev/DEVICE"},
		{"repeat zero", []string{"-t", dir, "--repeat", "0"}, "--repeat 0: must be at least 1"},
		{"given option alone", []string{"-t", dir, "--precision", "3"}, "--precision belongs to --repeat auto"},
		{"repeat auto reaches the request", []string{"-t", dir, "--repeat", "auto", "--precision", "100"}, "--precision 100: give a percentage between 0 and 100"},
		{"k8s option alone", []string{"-t", dir, "--suite", "quick", "--nodes", "a", "--telemetry=false"}, "--nodes, --size and the other Kubernetes options apply to Kubernetes targets: add --target k8s:STORAGECLASS"},
		{"suite given with a job", []string{"-t", dir, "--suite", "standard", "--fio-job", "x.fio"}, "--suite and --fio-job are alternatives: give one"},
		{"dry run of a suite", []string{"-t", dir, "--dry-run"}, "--dry-run applies to --fio-job"},
		{"rounds", []string{"-t", dir, "--rounds", "sideways"}, `--rounds "sideways": choose from network, isolated and parallel, in the order to run them (network,isolated,parallel)`},
		{"accept-new alone", []string{"-t", dir, "--ssh-accept-new-host-keys"}, "--ssh-accept-new-host-keys applies to ssh:// targets and --inventory hosts"},
		{"become without an ssh target", []string{"-t", dir, "--ssh-become"}, "--ssh-become applies to ssh:// targets (inventory hosts use ansible_become)"},
		{"hosts without inventory", []string{"-t", dir, "--hosts", "pis"}, "--hosts and --path choose hosts of an inventory: set --inventory"},
		{"ssh target without a path", []string{"-t", "ssh://pi01"}, `target "ssh://pi01" names no path on the host: write ssh://pi01/path/to/dir or ssh://pi01/dev/DEVICE`},
		{"inventory host without a path", []string{"--inventory", inv, "--hosts", "pis"}, "host pi01 of " + inv + " has no storbench_path: set it in the inventory or give --path"},
		{"inventory pattern matching nothing", []string{"--inventory", inv, "--hosts", "nas", "--path", "/srv"}, `--hosts: host pattern "nas": "nas" matches no group or host in ` + inv},
		{"bad label", []string{"-t", dir, "--label", "nokey"}, `--label "nokey": write it as key=value`},
		{"sweep counts", []string{"-t", dir, "--clients", "1,two"}, "--clients 1,two: give client counts (1,2,4,8) or auto"},
		{"sweep size alone", []string{"-t", dir, "--max-size", "1GiB"}, "--max-size belongs to the sweep: add --clients 1,2,4,8 or --clients auto"},
		{"noise size", []string{"-t", dir, "--round", "contention", "--noise-size", "big"}, `--noise-size "big": give a size from 1MiB to 1TiB, such as 256MiB`},
		{"noise size alone", []string{"-t", dir, "--noise-size", "1GiB"}, "--probe, --noise-target and --noise-size belong to the contention round: set --round contention"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, db, err := runCommand(t, tt.args...)
			var ee *cli.ExitError
			if err == nil || err.Error() != tt.err || !errors.As(err, &ee) || ee.Code != cli.ExitUsage {
				t.Fatalf("error %v, want exit 2 with %q", err, tt.err)
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused run created the database (%v)", err)
			}
		})
	}
}

func TestRepeatFlag(t *testing.T) {
	_, _, err := runCommand(t, "--repeat", "often")
	if err == nil || !strings.Contains(err.Error(), `"often" is neither a count nor auto`) {
		t.Fatalf("error %v", err)
	}
	var n int
	var auto bool
	v := &repeatValue{n: &n, auto: &auto}
	for _, c := range []struct {
		in   string
		n    int
		auto bool
	}{{"3", 3, false}, {"auto", 1, true}, {"2", 2, false}} {
		if err := v.Set(c.in); err != nil || n != c.n || auto != c.auto || v.String() != c.in {
			t.Errorf("Set(%q): n %d auto %v, String %q, %v", c.in, n, auto, v.String(), err)
		}
	}
}
