package analysis

import (
	"slices"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// LinkMatrix is the network round laid out node by node for one network
// ("host" or "pod"): a row per sending node, a column per receiving one.
type LinkMatrix struct {
	Network string
	// Nodes are every node that sent or received, sorted by name.
	Nodes []string
	// Cells[i][j] is from Nodes[i] to Nodes[j]; nil on the diagonal and
	// for pairs not measured.
	Cells [][]*Link
}

// Link is one direction between two nodes: the means over the
// repetitions that completed.
type Link struct {
	From, To string
	// SendBytesPerSec is TCP throughput from From to To; 0 when not
	// measured.
	SendBytesPerSec float64
	// Round trips of 64-byte blocks, with the link idle and while a
	// transfer from From to To keeps it busy.
	IdleP50, IdleP99, BusyP50, BusyP99 time.Duration
	// Failed holds the first failure's message, "" when none.
	Failed string
}

// LinkMatrices reads the network round's results (round "network"),
// one matrix per network; nil when there are none.
func LinkMatrices(results []result.Result) []LinkMatrix {
	type key struct{ network, from, to string }
	type acc struct {
		link                           Link
		sends                          []float64
		idle50, idle99, busy50, busy99 []time.Duration
	}
	accs := map[key]*acc{}
	var keys []key
	for _, r := range results {
		if r.Round != result.RoundNetwork {
			continue
		}
		k := key{result.LabelNetwork.Of(r.Labels), result.LabelNetFrom.Of(r.Labels), result.LabelNetTo.Of(r.Labels)}
		a := accs[k]
		if a == nil {
			a = &acc{link: Link{From: k.from, To: k.to}}
			accs[k] = a
			keys = append(keys, k)
		}
		if r.Status != result.StatusComplete || r.Write == nil {
			if a.link.Failed == "" {
				a.link.Failed = r.Workload + ": " + r.Error
			}
			continue
		}
		p50, _ := r.Write.Completion.At(50)
		p99, _ := r.Write.Completion.At(99)
		switch r.Workload {
		case result.WorkloadTCPSend:
			a.sends = append(a.sends, r.Write.BytesPerSec)
		case result.WorkloadTCPRTTIdle:
			a.idle50, a.idle99 = append(a.idle50, p50), append(a.idle99, p99)
		case result.WorkloadTCPRTTBusy:
			a.busy50, a.busy99 = append(a.busy50, p50), append(a.busy99, p99)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	byNetwork := map[string]*LinkMatrix{}
	var networks []string
	for _, k := range keys {
		if byNetwork[k.network] == nil {
			byNetwork[k.network] = &LinkMatrix{Network: k.network}
			networks = append(networks, k.network)
		}
		m := byNetwork[k.network]
		for _, n := range []string{k.from, k.to} {
			if !slices.Contains(m.Nodes, n) {
				m.Nodes = append(m.Nodes, n)
			}
		}
	}
	slices.Sort(networks)
	var out []LinkMatrix
	for _, n := range networks {
		m := byNetwork[n]
		slices.Sort(m.Nodes)
		m.Cells = make([][]*Link, len(m.Nodes))
		for i := range m.Cells {
			m.Cells[i] = make([]*Link, len(m.Nodes))
		}
		out = append(out, *m)
	}
	for _, k := range keys {
		a := accs[k]
		l := a.link
		l.SendBytesPerSec = meanFloat(a.sends)
		l.IdleP50, l.IdleP99 = meanDuration(a.idle50), meanDuration(a.idle99)
		l.BusyP50, l.BusyP99 = meanDuration(a.busy50), meanDuration(a.busy99)
		for mi := range out {
			if out[mi].Network == k.network {
				out[mi].Cells[slices.Index(out[mi].Nodes, k.from)][slices.Index(out[mi].Nodes, k.to)] = &l
			}
		}
	}
	return out
}

// Link returns the measured link from one node to another, nil when the
// matrix has none.
func (m LinkMatrix) Link(from, to string) *Link {
	i, j := slices.Index(m.Nodes, from), slices.Index(m.Nodes, to)
	if i < 0 || j < 0 {
		return nil
	}
	return m.Cells[i][j]
}

func meanFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func meanDuration(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	var s time.Duration
	for _, x := range v {
		s += x
	}
	return s / time.Duration(len(v))
}
