package render

import (
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// Explained writes, for show, the network round's matrices and the
// breakdown of each network-backed or replicated result, as compare and
// report show them. Nothing when there are neither.
func Explained(w io.Writer, links []analysis.LinkMatrix, bs []analysis.Breakdown) error {
	d := &doc{}
	explainSection(d, links, bs)
	if len(d.blocks) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return writeText(w, d, false)
}

// explainSection adds a table per link matrix and, per breakdown, its
// summary and a chart walking from the local disk to the measured figure.
func explainSection(d *doc, links []analysis.LinkMatrix, bs []analysis.Breakdown) {
	for _, m := range links {
		d.h2(fmt.Sprintf("Links between nodes (%s network)", m.Network))
		d.p("From each row's node to each column's: TCP throughput, then the round trip p50 of 64-byte blocks with the link idle -> busy with a transfer (fio's net engine).")
		t := table{head: append([]string{"from \\ to"}, m.Nodes...), right: []bool{false}}
		for range m.Nodes {
			t.right = append(t.right, true)
		}
		for i, from := range m.Nodes {
			row := []string{from}
			for _, l := range m.Cells[i] {
				switch {
				case l == nil:
					row = append(row, "-")
				case l.Failed != "" && l.SendBytesPerSec == 0:
					row = append(row, "failed")
				default:
					row = append(row, fmt.Sprintf("%s, %s -> %s", units.MBps(l.SendBytesPerSec), units.Latency(l.IdleP50), units.Latency(l.BusyP50)))
				}
			}
			t.rows = append(t.rows, row)
		}
		d.add(t)
		var failed list
		for _, row := range m.Cells {
			for _, l := range row {
				if l != nil && l.Failed != "" {
					failed.items = append(failed.items, listItem{text: fmt.Sprintf("%s -> %s: %s", l.From, l.To, l.Failed), tone: "bad"})
				}
			}
		}
		if len(failed.items) > 0 {
			d.add(failed)
		}
	}
	if len(bs) == 0 {
		return
	}
	d.h2("Why these figures: local disk, link, replication")
	d.p("Each network-backed or replicated result against the ceilings its parts allow (docs/breakdown.md): the local disk under the storage, the measured link to its server or replica nodes, that link shared by the remote copies, and what is left to the storage engine.")
	for _, b := range bs {
		d.p("%s (%s, %s): %s", b.Target, b.Round, b.Direction, b.Summary)
		if len(b.Steps) > 0 {
			var items []bar
			for _, s := range b.Steps {
				note, label := "", s.Name
				if s.LostBPS > 0 {
					note = units.MBps(s.LostBPS) + " less"
				}
				if s.Name == analysis.PartRest {
					label = "measured"
					if s.LostBPS > 0 {
						note = units.MBps(s.LostBPS) + " to the storage engine"
					}
				}
				items = append(items, bar{label: label, value: s.LeftBPS, display: units.MBps(s.LeftBPS), note: note})
			}
			d.add(bars{title: b.Target + " " + b.Workload + ": from the local disk to the measured figure", items: items})
		}
		if len(b.Missing) > 0 {
			var l list
			for _, m := range b.Missing {
				l.items = append(l.items, listItem{text: "missing " + m, tone: "warn"})
			}
			d.add(l)
		}
	}
}
