package ceph

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
)

// replay answers `ceph ARGS -f json` with testdata/ARGS-JOINED-BY-DASHES.json
// (cat through the local Cmder: the outputs are real Ceph's).
type replay struct{}

func (replay) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	words := strings.Join(args[:len(args)-2], "-") // without -f json
	return execx.Local{}.Command(ctx, "cat", filepath.Join("testdata", words+".json"))
}

func TestPoolPlacementLabels(t *testing.T) {
	c := Client{Cmder: replay{}}
	// pg ls-by-pool rbd is testdata/pg-ls-by-pool-rbd.json
	pl, err := c.PoolPlacement(context.Background(), "rbd")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		string(result.LabelCephPool):           "rbd",
		string(result.LabelCephOSDs):           "osd.0,osd.1,osd.2",
		string(result.LabelReplicas):           "3",
		string(result.LabelReplicasSource):     "ceph osd pool ls detail: pool rbd size",
		string(result.LabelReplicaNodes):       "sbceph-node-1,sbceph-node-2,sbceph-node-3",
		string(result.LabelReplicaNodesSource): "the crush hosts of the OSDs acting for pool rbd's PGs",
		string(result.LabelReplicationModel):   result.ReplicationPrimary,
	}
	if got := pl.Labels(); !reflect.DeepEqual(got, want) {
		t.Errorf("labels:\n got %v\nwant %v", got, want)
	}
	if _, err := c.PoolPlacement(context.Background(), "missing"); err == nil || !strings.Contains(err.Error(), "no pool missing") {
		t.Errorf("a pool that does not exist: %v", err)
	}
}

func TestFSDataPool(t *testing.T) {
	b := read(t, "fs-ls.json") // CEPH_FS=1: ceph fs new cephfs cephfs_metadata cephfs_data
	for _, tc := range []struct{ fs, want, err string }{
		{fs: "cephfs", want: "cephfs_data"},
		{fs: "other", err: "no CephFS other"},
	} {
		t.Run(tc.fs, func(t *testing.T) {
			got, err := ParseFSDataPool(b, tc.fs)
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("ParseFSDataPool(%s) = %q, %v; want %q, %q", tc.fs, got, err, tc.want, tc.err)
			}
		})
	}
	if got, err := (Client{Cmder: replay{}}).FSDataPool(context.Background(), "cephfs"); got != "cephfs_data" || err != nil {
		t.Errorf("FSDataPool(cephfs) = %q, %v", got, err)
	}
}

// osdGone answers as replay does, but `pg ls-by-pool` without osd.gone in
// any acting set: what Ceph lists once that OSD is down and its PGs peered
// without it.
type osdGone struct{ gone int }

func (g osdGone) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	words := strings.Join(args[:len(args)-2], "-")
	if words != "pg-ls-by-pool-rbd" {
		return replay{}.Command(ctx, name, args...)
	}
	b, err := os.ReadFile(filepath.Join("testdata", words+".json"))
	if err != nil {
		panic(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	for _, pg := range doc["pg_stats"].([]any) {
		m := pg.(map[string]any)
		var acting []any
		for _, id := range m["acting"].([]any) {
			if int(id.(float64)) != g.gone {
				acting = append(acting, id)
			}
		}
		m["acting"] = acting
	}
	out, _ := json.Marshal(doc)
	return execx.Local{}.Command(ctx, "printf", "%s", string(out))
}

// TestPoolPlacementUndersized: with osd.2 gone from every acting set the
// pool's PGs are undersized, and the placement counts them (the runner
// then names the down OSD); the healthy listing has none.
func TestPoolPlacementUndersized(t *testing.T) {
	pl, err := (Client{Cmder: replay{}}).PoolPlacement(context.Background(), "rbd")
	if err != nil || pl.Undersized != 0 {
		t.Fatalf("healthy: %d undersized, %v", pl.Undersized, err)
	}
	pl, err = (Client{Cmder: osdGone{gone: 2}}).PoolPlacement(context.Background(), "rbd")
	if err != nil {
		t.Fatal(err)
	}
	if pl.Undersized == 0 || slices.Contains(pl.OSDs, 2) {
		t.Errorf("osd.2 gone: %d undersized, OSDs %v", pl.Undersized, pl.OSDs)
	}
}
