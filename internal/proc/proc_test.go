package proc

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       Stat
		wantErr    bool
	}{
		{"plain", "123 (fio) S 45 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10 18446744073709551615",
			Stat{PID: 123, PPID: 45, StartTicks: 98765, State: "S", Comm: "fio"}, false},
		{"comm with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0",
			Stat{PID: 7, PPID: 1, StartTicks: 42, State: "R", Comm: "a (b) c"}, false},
		{"truncated", "7 (x) R 1 7", Stat{}, true},
		{"no comm", "garbage", Stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.line))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseStat = %+v, %v; want %+v, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	r := Reader{}
	self, err := r.Self()
	if err != nil {
		t.Fatal(err)
	}
	// A process that has exited and been reaped.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	exited := self
	exited.PID = c.Process.Pid
	reused := self
	reused.StartTicks++
	rebooted := self
	rebooted.BootID = "00000000-0000-0000-0000-000000000000"
	elsewhere := self
	elsewhere.Host = self.Host + "-elsewhere"
	tests := []struct {
		name string
		p    *result.Process
		want Liveness
	}{
		{"this process", &self, Alive},
		{"exited", &exited, Gone},
		{"pid reused", &reused, Gone},
		{"rebooted", &rebooted, Gone},
		{"other host", &elsewhere, Unknown},
		{"nothing recorded", nil, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, why := r.Check(tt.p); got != tt.want {
				t.Errorf("Check = %s (%s), want %s", got, why, tt.want)
			}
		})
	}
	if self.PID != os.Getpid() || self.BootID == "" {
		t.Errorf("Self = %+v", self)
	}
}

// A process whose working directory was removed under it is still found
// working there, and stopped; what it forked is found by its command.
func TestStopWorkingInRemovedDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "storbench-20261125-010203-abcd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// sh forks a copy of itself (same command line, same directory) that
	// ignores SIGTERM, as a fio job does once its main process is gone. The
	// copy waits on a stdin never written (through fd 3: sh gives a
	// background command /dev/null), forking nothing: a fork made to
	// run a command would share the command line until it executes.
	cmd := exec.Command("sh", "-c", `exec 3<&0; (trap "" TERM; read -r _ <&3) & echo started; wait`)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	r := Reader{}
	main, err := r.Stat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	forks, err := r.Forks(Command{Stat: main, Args: cmd.Args, Dir: dir})
	if err != nil || len(forks) != 1 || forks[0].PPID != main.PID {
		t.Fatalf("forks of %d: %v %v", main.PID, forks, err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	found, err := r.WorkingIn(dir)
	if err != nil || len(found) < 2 {
		t.Fatalf("working in the removed %s: %v %v", dir, found, err)
	}
	if spared, err := r.StopWorkingIn(dir, "fio", 5*time.Second); err != nil || len(spared) != 0 {
		t.Fatalf("stopped %v (%v) of no fio", spared, err)
	}
	stopped, err := r.StopWorkingIn(dir, "", 5*time.Second)
	if err != nil || len(stopped) != len(found) {
		t.Fatalf("stopped %v: %v", stopped, err)
	}
	if left, _ := r.WorkingIn(dir); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}
