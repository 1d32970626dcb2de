package analysis

import (
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func TestDifferentMethodsAreNoted(t *testing.T) {
	mk := func(target, workload, method string, iops float64) result.Figures {
		r := result.Result{RunID: "r", Target: target, Round: result.RoundIsolated, Workload: workload, Method: method,
			Status: result.StatusComplete, Read: &result.Direction{IOPS: iops, TotalIOs: 1}}
		return r.Figures()
	}
	figs := []result.Figures{
		mk("nvme", "rand-read-4k-qd1", "", 12000),
		mk("nfs", "rand-read-4k-qd1", "iozone -a, 4k record, random read", 3000),
		mk("nvme", "seq-read", "", 900),
		mk("sd", "seq-read", "", 40),
	}
	c, err := Compare(figs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Methods) != 1 {
		t.Fatalf("methods = %+v, want one note", c.Methods)
	}
	m := c.Methods[0]
	if m.Workload != "rand-read-4k-qd1" || m.Methods["nvme"] != OwnMethod || m.Methods["nfs"] != "iozone -a, 4k record, random read" {
		t.Errorf("note = %+v", m)
	}
}
