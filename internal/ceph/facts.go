// Package ceph reads the Ceph facts storbench uses from the ceph CLI's JSON
// (Ceph 16.2 and later): the OSDs with their crush host and device, the
// pools with their size and placement groups, each PG's primary, OSD perf
// (commit and apply latency) and `ceph tell osd.N bench`. Parsing is apart
// from running, so recorded outputs (testdata/) test it.
package ceph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// OSD is one object storage daemon: where it runs and on what.
type OSD struct {
	ID          int
	Name        string // osd.N
	Host        string // its crush host bucket (the node, as the crush map says)
	Up          bool
	DeviceClass string   // hdd, ssd, nvme
	Devices     []string // kernel devices holding its data (metadata "devices": vda, sdb...)
	Rotational  bool
	Objectstore string // bluestore
	DataPath    string // osd_data
	Addr        string // public (front) address
	Port        int    // its port there (the first of its public addresses)
}

// Pool is one RADOS pool.
type Pool struct {
	ID        int
	Name      string
	Size      int // replicas
	MinSize   int
	PGNum     int
	CrushRule int
	Erasure   bool
}

// PG is one placement group's acting set.
type PG struct {
	ID      string
	State   string
	Acting  []int
	Primary int
	Bytes   int64 // the data it holds (stat_sum.num_bytes)
}

// Latency is one OSD's perf counters at one moment (`ceph osd perf`).
type Latency struct {
	OSD    int
	Commit time.Duration
	Apply  time.Duration
}

// Bench is `ceph tell osd.N bench`: the OSD's object store alone (no
// network, no replication).
type Bench struct {
	OSD          int
	BytesWritten int64
	BlockBytes   int64
	Elapsed      time.Duration
	BytesPerSec  float64
	IOPS         float64
}

// ParseOSDTree reads `ceph osd tree -f json` into OSDs with their crush host
// and status, sorted by ID.
func ParseOSDTree(b []byte) ([]OSD, error) {
	var tree struct {
		Nodes []struct {
			ID          int    `json:"id"`
			Name        string `json:"name"`
			Type        string `json:"type"`
			Children    []int  `json:"children"`
			Status      string `json:"status"`
			DeviceClass string `json:"device_class"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, fmt.Errorf("ceph osd tree: %w", err)
	}
	host := map[int]string{}
	for _, n := range tree.Nodes {
		if n.Type == "host" {
			for _, c := range n.Children {
				host[c] = n.Name
			}
		}
	}
	var osds []OSD
	for _, n := range tree.Nodes {
		if n.Type == "osd" {
			osds = append(osds, OSD{ID: n.ID, Name: n.Name, Host: host[n.ID], Up: n.Status == "up", DeviceClass: n.DeviceClass})
		}
	}
	sort.Slice(osds, func(i, j int) bool { return osds[i].ID < osds[j].ID })
	return osds, nil
}

// metadata is the part of `ceph osd metadata -f json` storbench reads.
type metadata struct {
	ID          int    `json:"id"`
	Devices     string `json:"devices"`
	Rotational  string `json:"rotational"`
	Objectstore string `json:"osd_objectstore"`
	Data        string `json:"osd_data"`
	FrontAddr   string `json:"front_addr"`
}

// AddMetadata fills each OSD's device facts from `ceph osd metadata -f json`.
func AddMetadata(osds []OSD, b []byte) error {
	var md []metadata
	if err := json.Unmarshal(b, &md); err != nil {
		return fmt.Errorf("ceph osd metadata: %w", err)
	}
	by := map[int]metadata{}
	for _, m := range md {
		by[m.ID] = m
	}
	for i := range osds {
		m, ok := by[osds[i].ID]
		if !ok {
			continue // an OSD never started has no metadata
		}
		if m.Devices != "" {
			osds[i].Devices = strings.Split(m.Devices, ",")
		}
		osds[i].Rotational = m.Rotational == "1"
		osds[i].Objectstore = m.Objectstore
		osds[i].DataPath = m.Data
		osds[i].Addr, osds[i].Port = frontAddr(m.FrontAddr)
	}
	return nil
}

// frontAddr takes the IP and port of the first address of
// "[v2:10.97.1.11:6800/4639,v1:10.97.1.11:6801/4639]".
func frontAddr(s string) (string, int) {
	s = strings.Trim(s, "[]")
	first, _, _ := strings.Cut(s, ",")
	_, a, ok := strings.Cut(first, ":")
	if !ok {
		return "", 0
	}
	a, _, _ = strings.Cut(a, "/")
	port := 0
	if i := strings.LastIndex(a, ":"); i >= 0 {
		port, _ = strconv.Atoi(a[i+1:])
		a = a[:i]
	}
	return a, port
}

// ParsePools reads `ceph osd pool ls detail -f json`.
func ParsePools(b []byte) ([]Pool, error) {
	var raw []struct {
		ID        int    `json:"pool_id"`
		Name      string `json:"pool_name"`
		Size      int    `json:"size"`
		MinSize   int    `json:"min_size"`
		PGNum     int    `json:"pg_num"`
		CrushRule int    `json:"crush_rule"`
		Type      int    `json:"type"` // 1 replicated, 3 erasure
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("ceph osd pool ls detail: %w", err)
	}
	pools := make([]Pool, 0, len(raw))
	for _, p := range raw {
		pools = append(pools, Pool{ID: p.ID, Name: p.Name, Size: p.Size, MinSize: p.MinSize, PGNum: p.PGNum, CrushRule: p.CrushRule, Erasure: p.Type == 3})
	}
	return pools, nil
}

// ParsePGs reads `ceph pg ls-by-pool POOL -f json`.
func ParsePGs(b []byte) ([]PG, error) {
	var raw struct {
		Stats []struct {
			ID      string `json:"pgid"`
			State   string `json:"state"`
			Acting  []int  `json:"acting"`
			Primary int    `json:"acting_primary"`
			Sum     struct {
				Bytes int64 `json:"num_bytes"`
			} `json:"stat_sum"`
		} `json:"pg_stats"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("ceph pg ls-by-pool: %w", err)
	}
	pgs := make([]PG, 0, len(raw.Stats))
	for _, s := range raw.Stats {
		pgs = append(pgs, PG{ID: s.ID, State: s.State, Acting: s.Acting, Primary: s.Primary, Bytes: s.Sum.Bytes})
	}
	return pgs, nil
}

// PrimaryShare is the fraction of pgs each OSD leads: with data spread evenly
// over PGs, the share of a pool's writes it receives from clients and
// forwards to the other replicas.
func PrimaryShare(pgs []PG) map[int]float64 {
	share := map[int]float64{}
	if len(pgs) == 0 {
		return share
	}
	for _, pg := range pgs {
		share[pg.Primary]++
	}
	for id := range share {
		share[id] /= float64(len(pgs))
	}
	return share
}

// PrimaryByteShare is the fraction of the pool's bytes in the PGs each OSD
// leads: once a workload has written its data, where its writes went
// (objects do not spread evenly over few PGs). Empty when the PGs hold
// nothing.
func PrimaryByteShare(pgs []PG) map[int]float64 {
	share := map[int]float64{}
	var total int64
	for _, pg := range pgs {
		total += pg.Bytes
	}
	if total == 0 {
		return share
	}
	for _, pg := range pgs {
		share[pg.Primary] += float64(pg.Bytes) / float64(total)
	}
	return share
}

// ParsePerf reads `ceph osd perf -f json` (Pacific nests it under
// osdstats; older releases did not).
func ParsePerf(b []byte) ([]Latency, error) {
	type info struct {
		ID    int `json:"id"`
		Stats struct {
			CommitNs int64 `json:"commit_latency_ns"`
			ApplyNs  int64 `json:"apply_latency_ns"`
			CommitMs int64 `json:"commit_latency_ms"`
			ApplyMs  int64 `json:"apply_latency_ms"`
		} `json:"perf_stats"`
	}
	var raw struct {
		OSDStats struct {
			Infos []info `json:"osd_perf_infos"`
		} `json:"osdstats"`
		Infos []info `json:"osd_perf_infos"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("ceph osd perf: %w", err)
	}
	infos := raw.OSDStats.Infos
	if len(infos) == 0 {
		infos = raw.Infos
	}
	out := make([]Latency, 0, len(infos))
	for _, in := range infos {
		c, a := time.Duration(in.Stats.CommitNs), time.Duration(in.Stats.ApplyNs)
		if c == 0 && a == 0 {
			c, a = time.Duration(in.Stats.CommitMs)*time.Millisecond, time.Duration(in.Stats.ApplyMs)*time.Millisecond
		}
		out = append(out, Latency{OSD: in.ID, Commit: c, Apply: a})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OSD < out[j].OSD })
	return out, nil
}

// ParsePerfStream reads several `ceph osd perf -f json` outputs one after
// the other (a sampling loop's log), one slice of latencies per output.
func ParsePerfStream(b []byte) ([][]Latency, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out [][]Latency
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("ceph osd perf output %d: %w", len(out)+1, err)
		}
		l, err := ParsePerf(raw)
		if err != nil {
			return out, err
		}
		out = append(out, l)
	}
}

// ParseBench reads `ceph tell osd.N bench -f json` for osd.
func ParseBench(osd int, b []byte) (Bench, error) {
	var raw struct {
		BytesWritten int64   `json:"bytes_written"`
		BlockSize    int64   `json:"blocksize"`
		ElapsedSec   float64 `json:"elapsed_sec"`
		BytesPerSec  float64 `json:"bytes_per_sec"`
		IOPS         float64 `json:"iops"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &raw); err != nil {
		return Bench{}, fmt.Errorf("ceph tell osd.%d bench: %w", osd, err)
	}
	if raw.BytesPerSec <= 0 {
		return Bench{}, fmt.Errorf("ceph tell osd.%d bench: no bytes_per_sec in %q", osd, strings.TrimSpace(string(b)))
	}
	return Bench{OSD: osd, BytesWritten: raw.BytesWritten, BlockBytes: raw.BlockSize,
		Elapsed: time.Duration(raw.ElapsedSec * float64(time.Second)), BytesPerSec: raw.BytesPerSec, IOPS: raw.IOPS}, nil
}
