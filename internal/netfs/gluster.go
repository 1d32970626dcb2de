package netfs

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// GraphFile is where a GlusterFS FUSE client exposes the volume graph it
// runs, relative to the mount point.
const GraphFile = ".meta/graphs/active/volfile"

// Xlator is one translator of a GlusterFS volume graph.
type Xlator struct {
	Name, Type string
	Options    map[string]string
	Subvolumes []string
}

// ParseVolfile reads a GlusterFS volume file ("volume NAME", "type T",
// "option K V", "subvolumes A B", "end-volume").
func ParseVolfile(data []byte) ([]Xlator, error) {
	var out []Xlator
	var cur *Xlator
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "volume" && len(f) == 2 && cur == nil:
			cur = &Xlator{Name: f[1], Options: map[string]string{}}
		case cur == nil:
			return nil, fmt.Errorf("volfile line %d: %q outside a volume", n, sc.Text())
		case f[0] == "type" && len(f) == 2:
			cur.Type = f[1]
		case f[0] == "option" && len(f) >= 2:
			cur.Options[f[1]] = strings.Join(f[2:], " ")
		case f[0] == "subvolumes":
			cur.Subvolumes = append(cur.Subvolumes, f[1:]...)
		case f[0] == "end-volume":
			out = append(out, *cur)
			cur = nil
		default:
			return nil, fmt.Errorf("volfile line %d: unknown %q", n, f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the volfile: %w", err)
	}
	if cur != nil {
		return nil, fmt.Errorf("volfile: volume %s has no end-volume", cur.Name)
	}
	return out, nil
}

// describeGluster reads the client graph: every protocol/client is a
// brick (remote-host, remote-subvolume), a cluster/replicate's
// subvolumes are one replica set, a cluster/disperse's one erasure-coded
// set. Without the graph it falls back on the source's volfile server.
func (m *Mount) describeGluster(read ReadFunc) {
	m.Model, m.Replicas, m.ReplicasSource = result.ReplicationClient, 0, ""
	volfileServer, volume, _ := strings.Cut(m.Source, ":")
	file := path.Join(m.Point, GraphFile)
	var graph []Xlator
	var err error
	if read == nil {
		err = fmt.Errorf("no way to read the mount's files")
	} else if data, rerr := read(file); rerr != nil {
		err = rerr
	} else {
		graph, err = ParseVolfile(data)
	}
	if err != nil || len(graph) == 0 {
		m.Servers = hostsOf(volfileServer, PortGlusterd)
		m.Missing = append(m.Missing, fmt.Sprintf("bricks and replicas of volume %s: the client graph %s could not be read (%v); only the volfile server is known", volume, file, err))
		return
	}
	for _, x := range graph {
		if x.Type == "protocol/client" && x.Options["remote-host"] != "" {
			m.Servers = append(m.Servers, Server{Host: x.Options["remote-host"], Port: PortGlusterd, Brick: x.Options["remote-subvolume"]})
		}
	}
	sets := 0
	for _, x := range graph {
		switch x.Type {
		case "cluster/replicate":
			sets++
			copies := len(x.Subvolumes)
			if sets == 1 {
				m.Replicas = copies
				m.ReplicasSource = fmt.Sprintf("the client graph %s: %s replicates over %d bricks", GraphFile, x.Name, copies)
				if arb, _ := strconv.Atoi(x.Options["arbiter-count"]); arb > 0 {
					m.ReplicasSource += fmt.Sprintf(" (%d of them an arbiter, holding metadata only)", arb)
				}
			}
		case "cluster/disperse":
			sets++
			if sets == 1 {
				red, _ := strconv.Atoi(x.Options["redundancy"])
				m.Replicas = 1
				m.ReplicasSource = fmt.Sprintf("the client graph %s: %s disperses over %d bricks, %d of redundancy (the client sends %d/%d of the payload)",
					GraphFile, x.Name, len(x.Subvolumes), red, len(x.Subvolumes), len(x.Subvolumes)-red)
			}
		}
	}
	if sets == 0 {
		m.Replicas, m.ReplicasSource = 1, fmt.Sprintf("the client graph %s: a plain distributed volume, one copy", GraphFile)
	} else if sets > 1 {
		m.ReplicasSource += fmt.Sprintf("; %d such sets, each file in one", sets)
	}
}
