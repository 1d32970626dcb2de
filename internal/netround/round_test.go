package netround_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// TestNetworkRoundOfARun runs `--rounds network` on two SSH targets in
// their own namespaces: every direction is stored as results of round
// "network", and the matrix and its table read them back.
func TestNetworkRoundOfARun(t *testing.T) {
	testenv.Measures(t)
	net, eps := sshHosts(t)
	net.Nodes[0].Shape(t, "1gbit", 125_000_000)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	suite, err := spec.Builtin("quick")
	if err != nil {
		t.Fatal(err)
	}
	var targets []runner.Target
	for _, ep := range eps {
		dir := t.TempDir()
		targets = append(targets, ssh.NewTarget("ssh://"+ep.Node+dir, ep.Cmder.(*ssh.Client), dir, ssh.TargetOptions{}))
	}
	run, err := (&engine.Engine{Store: st, Observer: engine.Silent{}}).Run(ctx, engine.Plan{Suite: suite, Targets: targets, Repeat: 1,
		Rounds: []string{result.RoundNetwork}})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Fatalf("%d results, want 3 per direction:\n%v", len(rs), rs)
	}
	ms := analysis.LinkMatrices(rs)
	if len(ms) != 1 || len(ms[0].Nodes) != 2 {
		t.Fatalf("matrices %+v", ms)
	}
	m := ms[0]
	for _, d := range [][2]string{{m.Nodes[0], m.Nodes[1]}, {m.Nodes[1], m.Nodes[0]}} {
		l := m.Link(d[0], d[1])
		if l == nil || l.Failed != "" || l.SendBytesPerSec < 0.8*125e6 || l.SendBytesPerSec > 1.02*125e6 || l.BusyP50 <= l.IdleP50 {
			t.Errorf("%s -> %s: %+v, want about 125 MB/s and a busy round trip above the idle one", d[0], d[1], l)
		}
	}
	var out bytes.Buffer
	if err := render.Explained(&out, ms, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	if !strings.Contains(out.String(), "from \\ to") || !strings.Contains(out.String(), " MB/s") {
		t.Errorf("matrix table:\n%s", out.String())
	}
}
