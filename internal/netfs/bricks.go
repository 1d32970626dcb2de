package netfs

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// A GlusterFS FUSE client keeps, for each brick it talks to (each
// protocol/client translator of its graph), the latency of every file
// operation it sent, as the client waited for it, and the connection's
// state: ".meta/graphs/active/XLATOR/profile" and ".../private". Reading
// the profile resets it: each read covers the time since the one before.
const (
	metaActive     = ".meta/graphs/active"
	profileFile    = "profile"
	privateFile    = "private"
	maxMetaFileLen = 64 << 10
)

// FopLatency is one file operation's count and summed latency.
type FopLatency struct {
	Count int64
	Total time.Duration
}

// Mean is the operation's mean latency, 0 without operations.
func (f FopLatency) Mean() time.Duration {
	if f.Count <= 0 {
		return 0
	}
	return f.Total / time.Duration(f.Count)
}

// BrickStat is one brick as the client sees it.
type BrickStat struct {
	Xlator string // the client translator: VOLUME-client-N
	Host   string // the brick's server (remote-host)
	Brick  string // its directory there (remote-subvolume)
	// Connected is the client's connection to the brick.
	Connected bool
	// Ops are the operations since the profile was last read, by name
	// (WRITE, READ, FSYNC...).
	Ops map[string]FopLatency
	// BytesWritten and BytesRead are the connection's totals since the
	// mount (requests and replies, not only data).
	BytesWritten, BytesRead int64
}

// ReadBricks reads every brick's profile and state from a GlusterFS FUSE
// mount at point. It resets the profiles (a read covers the time since
// the last one).
func ReadBricks(read ReadFunc, point string) ([]BrickStat, error) {
	data, err := read(path.Join(point, GraphFile))
	if err != nil {
		return nil, fmt.Errorf("the client graph: %w", err)
	}
	graph, err := ParseVolfile(data)
	if err != nil {
		return nil, err
	}
	var out []BrickStat
	for _, x := range graph {
		if x.Type != "protocol/client" || x.Options["remote-host"] == "" {
			continue
		}
		b := BrickStat{Xlator: x.Name, Host: x.Options["remote-host"], Brick: x.Options["remote-subvolume"]}
		dir := path.Join(point, metaActive, x.Name)
		priv, err := read(path.Join(dir, privateFile))
		if err != nil {
			return nil, fmt.Errorf("brick %s:%s: %w", b.Host, b.Brick, err)
		}
		if b.Connected, b.BytesWritten, b.BytesRead, err = ParsePrivate(priv); err != nil {
			return nil, fmt.Errorf("brick %s:%s: %w", b.Host, b.Brick, err)
		}
		prof, err := read(path.Join(dir, profileFile))
		if err != nil {
			return nil, fmt.Errorf("brick %s:%s: %w", b.Host, b.Brick, err)
		}
		if b.Ops, err = ParseProfile(prof); err != nil {
			return nil, fmt.Errorf("brick %s:%s: %w", b.Host, b.Brick, err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the client graph names no brick")
	}
	return out, nil
}

// ParseProfile reads a client translator's profile: lines
// "XLATOR.latency.FOP = AVG:a CNT:n TOTAL:t MIN:m MAX:x", t in ns.
func ParseProfile(data []byte) (map[string]FopLatency, error) {
	if len(data) > maxMetaFileLen {
		return nil, fmt.Errorf("profile: %d bytes, more than a profile holds (%d)", len(data), maxMetaFileLen)
	}
	out := map[string]FopLatency{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "[") {
			continue
		}
		key, val, ok := strings.Cut(line, " = ")
		i := strings.LastIndex(key, ".latency.")
		if !ok || i < 0 {
			return nil, fmt.Errorf("profile line %d: %q is not XLATOR.latency.FOP = ...", n, line)
		}
		var f FopLatency
		for _, field := range strings.Fields(val) {
			k, v, _ := strings.Cut(field, ":")
			switch k {
			case "CNT":
				c, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("profile line %d: count %q: %w", n, v, err)
				}
				f.Count = c
			case "TOTAL":
				t, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return nil, fmt.Errorf("profile line %d: total %q: %w", n, v, err)
				}
				f.Total = time.Duration(t)
			}
		}
		out[key[i+len(".latency."):]] = f
	}
	return out, sc.Err()
}

// ParsePrivate reads a client translator's state: "connected = 1",
// "total_bytes_written = N", "total_bytes_read = N".
func ParsePrivate(data []byte) (connected bool, written, read int64, err error) {
	if len(data) > maxMetaFileLen {
		return false, 0, 0, fmt.Errorf("private: %d bytes, more than it holds (%d)", len(data), maxMetaFileLen)
	}
	seen := false
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch strings.TrimSpace(k) {
		case "connected":
			connected, seen = perr == nil && n == 1, true
		case "total_bytes_written":
			written = n
		case "total_bytes_read":
			read = n
		}
	}
	if !seen {
		return false, 0, 0, fmt.Errorf("private: no connected line")
	}
	return connected, written, read, nil
}
