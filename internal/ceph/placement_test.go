package ceph

import (
	"context"
	"path/filepath"
	"reflect"
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
