package ceph

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Placement is where a pool's data lives, as Ceph reports it: the pool
// (its size), the OSDs acting for its placement groups and their crush
// hosts.
type Placement struct {
	Pool  Pool
	OSDs  []int    // sorted
	Hosts []string // sorted, without repeats
	// Undersized counts the PGs acting on fewer OSDs than the pool's
	// size: an OSD that should hold them is down (it acts for none of
	// them then, so OSDs does not list it).
	Undersized int
}

// NoOSD is the OSD id Ceph puts in an acting set for a missing member
// (CRUSH_ITEM_NONE: an erasure-coded PG's lost shard).
const NoOSD = 2147483647

// PoolPlacement reads pool's size (`osd pool ls detail`), the OSDs acting
// for its PGs (`pg ls-by-pool`) and their crush hosts (`osd tree`).
func (c Client) PoolPlacement(ctx context.Context, pool string) (Placement, error) {
	pools, err := c.Pools(ctx)
	if err != nil {
		return Placement{}, err
	}
	var pl Placement
	found := false
	for _, p := range pools {
		if p.Name == pool {
			pl.Pool, found = p, true
		}
	}
	if !found {
		return Placement{}, fmt.Errorf("no pool %s in the cluster", pool)
	}
	pgs, err := c.PGs(ctx, pool)
	if err != nil {
		return Placement{}, err
	}
	osds, err := c.OSDs(ctx)
	if err != nil {
		return Placement{}, err
	}
	host := map[int]string{}
	for _, o := range osds {
		host[o.ID] = o.Host
	}
	inPool, hosts := map[int]bool{}, map[string]bool{}
	for _, pg := range pgs {
		members := 0
		for _, id := range pg.Acting {
			if id == NoOSD || id < 0 {
				continue
			}
			members++
			if !inPool[id] {
				inPool[id] = true
				pl.OSDs = append(pl.OSDs, id)
			}
			if h := host[id]; h != "" && !hosts[h] {
				hosts[h] = true
				pl.Hosts = append(pl.Hosts, h)
			}
		}
		if members < pl.Pool.Size {
			pl.Undersized++
		}
	}
	sort.Ints(pl.OSDs)
	sort.Strings(pl.Hosts)
	return pl, nil
}

// Labels are a result's labels for the placement: the pool, its size and
// where that was read, the OSDs and their hosts, primary-copy replication.
// An erasure-coded pool keeps no copies to count and says so.
func (pl Placement) Labels() map[string]string {
	names := make([]string, len(pl.OSDs))
	for i, id := range pl.OSDs {
		names[i] = "osd." + strconv.Itoa(id)
	}
	pool := pl.Pool.Name
	l := map[string]string{}
	result.LabelCephPool.Set(l, pool)
	result.LabelCephOSDs.Set(l, strings.Join(names, ","))
	result.LabelReplicaNodes.Set(l, strings.Join(pl.Hosts, ","))
	result.LabelReplicaNodesSource.Set(l, "the crush hosts of the OSDs acting for pool "+pool+"'s PGs")
	result.LabelReplicationModel.Set(l, result.ReplicationPrimary)
	if pl.Pool.Erasure {
		result.LabelReplicasSource.Set(l, "pool "+pool+" is erasure-coded: no copies to count")
		return l
	}
	result.LabelReplicas.Set(l, strconv.Itoa(pl.Pool.Size))
	result.LabelReplicasSource.Set(l, "ceph osd pool ls detail: pool "+pool+" size")
	return l
}

// FSDataPool returns the first data pool of CephFS fs (`fs ls`): where
// a file's data lives unless a layout says otherwise.
func (c Client) FSDataPool(ctx context.Context, fs string) (string, error) {
	b, err := c.JSON(ctx, "fs", "ls")
	if err != nil {
		return "", err
	}
	return ParseFSDataPool(b, fs)
}

// ParseFSDataPool reads `ceph fs ls -f json` for fs's first data pool.
func ParseFSDataPool(b []byte, fs string) (string, error) {
	var list []struct {
		Name      string   `json:"name"`
		DataPools []string `json:"data_pools"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "", fmt.Errorf("parsing ceph fs ls: %w", err)
	}
	for _, f := range list {
		if f.Name == fs {
			if len(f.DataPools) == 0 {
				return "", fmt.Errorf("CephFS %s has no data pool", fs)
			}
			return f.DataPools[0], nil
		}
	}
	return "", fmt.Errorf("no CephFS %s in the cluster", fs)
}
