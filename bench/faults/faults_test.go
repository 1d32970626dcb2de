// Package faults is the fault matrix: for each fault injected into a real
// Ceph and a real GlusterFS on this machine (one OSD's or brick's disk
// slow, its node's link slow, its process starved of CPU, it dead, and no
// fault), the verdict storbench gives from a run on that storage, against
// the fault: the node it names and the cause. Goal: every fault named
// right, with its node. It needs root, fio, Ceph's and GlusterFS's
// packages; it is a benchmark, not a test (about 4 minutes):
//
//	go test -run '^$' -bench FaultMatrix -benchtime 1x ./bench/faults/
package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/storbench/storbenchtest"
	"github.com/storbench/storbench/test/cephtest"
	"github.com/storbench/storbench/test/glustertest"
)

const suite = `name: fault-write
workloads:
  - {name: seq-write, rw: write, bs: %s, iodepth: %d, size: 64MiB, runtime: %ds, time_based: true, direct: true}
`

// row is one fault and what storbench said of it.
type row struct {
	storage, fault, on, want string // want: the cause a right verdict names
	got                      []string
}

// right is whether exactly one verdict names the faulty node with the
// cause wanted (none wanted, none given, for no fault).
func (r row) right() string {
	if r.want == "" {
		if len(r.got) == 0 {
			return "yes"
		}
		return "no"
	}
	if len(r.got) == 1 && strings.HasPrefix(r.got[0], r.on+": "+r.want) {
		return "yes"
	}
	for _, g := range r.got {
		if strings.HasPrefix(g, r.on+": ") {
			return "node only"
		}
	}
	return "no"
}

func BenchmarkFaultMatrix(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var rows []row
	b.Run("ceph", func(b *testing.B) { rows = append(rows, cephMatrix(ctx, b)...) })
	b.Run("gluster", func(b *testing.B) { rows = append(rows, glusterMatrix(ctx, b)...) })
	var out strings.Builder
	fmt.Fprintln(&out, "| storage | fault | on | storbench's verdict | right |")
	fmt.Fprintln(&out, "|---|---|---|---|---|")
	named := 0
	for _, r := range rows {
		got := strings.Join(r.got, "; ")
		if got == "" {
			got = "none"
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s |\n", r.storage, r.fault, r.on, got, r.right())
		if r.right() == "yes" {
			named++
		}
	}
	fmt.Fprintf(&out, "\n%d of %d right\n", named, len(rows))
	b.Log("\n" + out.String())
	if f := os.Getenv("FAULTS_OUT"); f != "" {
		if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
			b.Error(err)
		}
	}
}

// cephMatrix: a standalone Ceph (three OSD nodes, a size-3 pool), the rbd
// target with telemetry; each fault on osd.2 (sbceph-node-3).
func cephMatrix(ctx context.Context, b *testing.B) []row {
	c := cephtest.Start(b, cephtest.Options{})
	c.Script(b, "wait-clean", "120")
	target := "rbd:" + c.Pool + "?conf=" + c.Conf
	node := c.Nodes[2].Name
	id := strconv.Itoa(c.Nodes[2].OSD)
	runner := storbenchtest.New(ctx, b, "fault-write.yaml", fmt.Sprintf(suite, "4MiB", 8, 8), target)
	faults := []struct {
		fault, want string
		on, off     []string
	}{
		{"none", "", nil, nil},
		{"disk throttled to 20 MiB/s (blkio)", analysis.OSDCauseDisk, []string{"osd", "slow", id, strconv.Itoa(20 << 20)}, []string{"osd", "unslow", id}},
		{"link shaped to 100 Mbit/s (tbf)", analysis.OSDCauseLink, []string{"link", "shape", node, "100mbit"}, []string{"link", "unshape", node}},
		{"CPU capped at 10% of a core", "cpu", []string{"osd", "cpu", id, "10"}, []string{"osd", "uncpu", id}},
		{"OSD stopped", analysis.OSDCauseDown, []string{"osd", "stop", id}, []string{"osd", "start", id}},
	}
	var rows []row
	for _, f := range faults {
		r := row{storage: "Ceph (rbd)", fault: f.fault, want: f.want}
		if f.on != nil {
			r.on = node
			c.Script(b, f.on...)
		}
		d := runner.Run(ctx, b)
		for _, v := range d.OSDs {
			r.got = append(r.got, v.Host+": "+v.Cause+" (osd."+strconv.Itoa(v.OSD)+": "+v.Summary+")")
		}
		if f.off != nil {
			c.Script(b, f.off...)
			c.Script(b, "wait-clean", "120")
		}
		rows = append(rows, r)
	}
	return rows
}

// glusterMatrix: a standalone replica-3 volume opening files O_DIRECT on
// its bricks, a directory on its FUSE mount as the target; each fault on
// the third brick.
func glusterMatrix(ctx context.Context, b *testing.B) []row {
	v := glustertest.Start(b, glustertest.Options{VolumeOptions: glustertest.DirectIO})
	dir := filepath.Join(v.Mount, "faults")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	node := v.Nodes[2].Addr
	runner := storbenchtest.New(ctx, b, "fault-write.yaml", fmt.Sprintf(suite, "1MiB", 4, 5), dir)
	type op func()
	faults := []struct {
		fault, want string
		on, off     op
	}{
		{"none", "", nil, nil},
		{"disk throttled to 10 MiB/s (blkio)", analysis.BrickCauseServer,
			func() { v.BrickLimit(b, "slow", 2, strconv.Itoa(10<<20)) }, func() { v.BrickLimit(b, "unslow", 2, "") }},
		{"link shaped to 100 Mbit/s (tbf)", analysis.BrickCauseLink,
			func() { v.LinkOp(b, "shape", 2, "100mbit") }, func() { v.LinkOp(b, "unshape", 2, "") }},
		{"CPU capped at 5% of a core", analysis.BrickCauseServer,
			func() { v.BrickLimit(b, "cpu", 2, "5") }, func() { v.BrickLimit(b, "uncpu", 2, "") }},
		{"brick killed", analysis.BrickCauseDown, func() { v.Brick(b, "kill", 2) }, func() { v.Brick(b, "start", 2) }},
	}
	var rows []row
	for _, f := range faults {
		r := row{storage: "GlusterFS (FUSE)", fault: f.fault, want: f.want}
		if f.on != nil {
			r.on = node
			f.on()
		}
		d := runner.Run(ctx, b)
		for _, vd := range d.Bricks {
			r.got = append(r.got, vd.Host+": "+vd.Cause+" ("+vd.Summary+")")
		}
		if f.off != nil {
			f.off()
		}
		rows = append(rows, r)
	}
	return rows
}
