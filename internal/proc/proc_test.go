package proc

import (
	"os"
	"os/exec"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       Stat
		wantErr    bool
	}{
		{"plain", "123 (fio) S 45 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10 18446744073709551615",
			Stat{PID: 123, PPID: 45, StartTicks: 98765, State: "S"}, false},
		{"comm with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0",
			Stat{PID: 7, PPID: 1, StartTicks: 42, State: "R"}, false},
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
