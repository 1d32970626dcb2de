package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// dirClients is a local directory whose sweep clients each run in a
// directory of their own, as a Kubernetes class's client pods each have a
// volume of their own: runner.Clients with real fio and no cluster.
type dirClients struct {
	runner.Target
	group, root string
	made        []string
	released    bool
}

func (d *dirClients) ClientGroup() string        { return d.group }
func (d *dirClients) ClientStart() time.Duration { return 3 * time.Second }

func (d *dirClients) Clients(_ context.Context, _ *runner.Prepared, need runner.Need, n int) ([]runner.Client, error) {
	if need.FileSize <= 0 {
		return nil, fmt.Errorf("no client size in %+v", need)
	}
	for len(d.made) < n {
		dir := filepath.Join(d.root, fmt.Sprintf("client-%d", len(d.made)+1))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		d.made = append(d.made, dir)
	}
	out := make([]runner.Client, n)
	for i := range out {
		out[i] = runner.Client{Name: d.made[i], Cmder: execx.Local{}, Dir: d.made[i]}
	}
	return out, nil
}

func (d *dirClients) ReleaseClients(context.Context) error {
	d.released = true
	for _, dir := range d.made {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	d.made = nil
	return nil
}

// TestSweepGroupRealFio sweeps 1 and 2 clients on a group of two targets
// whose clients run apart (each its own fio, in its own directory): each
// step stores the group's aggregate over all four clients and each
// target's own; the estimate counts the clients' start; every client and
// target is removed at the end.
func TestSweepGroupRealFio(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir, st, obs := sweepSetup(t)
	var ts []runner.Target
	var dcs []*dirClients
	for i := 1; i <= 2; i++ {
		root := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		dc := &dirClients{Target: local.NewTarget(root, local.Options{}), group: "class:x", root: root}
		ts, dcs = append(ts, dc), append(dcs, dc)
	}
	plan := Plan{Targets: ts, Sweep: &Sweep{Workload: sweepWorkload(t, "2s"), Clients: []int{1, 2}}}
	run, err := (&Engine{Store: st, Observer: obs}).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(obs.messages, "\n"), "sweep of rr over 1,2 clients: about 10s, 2s a step and up to 3s to start its clients") {
		t.Errorf("no estimate with the clients' start: %q", obs.messages)
	}
	for i, dc := range dcs {
		if !dc.released {
			t.Errorf("target %d: clients not released", i+1)
		}
		emptyDir(t, dc.root)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	byTarget := map[string][]result.Result{}
	for _, r := range rs {
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	if len(rs) != 6 || len(byTarget["class:x"]) != 2 || len(byTarget[ts[0].Name()]) != 2 {
		t.Fatalf("%d results by target %v, want 2 steps of the group and of each target", len(rs), keys(byTarget))
	}
	for i, g := range byTarget["class:x"] {
		n := i + 1
		raw, err := st.RawFioJSON(context.Background(), g.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The group's step is 2n clients: n on each target.
		checkSweepStep(t, g, raw, 2*n)
		if g.Round != result.SweepRound(n) || result.LabelClients.Of(g.Labels) != strconv.Itoa(n) {
			t.Errorf("group step %d: round %s clients %s", n, g.Round, result.LabelClients.Of(g.Labels))
		}
		var sum float64
		for _, tr := range byTarget {
			if tr[i].Target != "class:x" && tr[i].Read != nil {
				sum += tr[i].Read.IOPS
			}
		}
		if d := g.Read.IOPS/sum - 1; d > 0.1 || d < -0.1 {
			t.Errorf("step %d: group %.0f IOPS, the targets' own sum %.0f", n, g.Read.IOPS, sum)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
