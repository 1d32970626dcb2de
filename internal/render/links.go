package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// LinkMatrices writes the network round node by node: TCP throughput from
// each row's node to each column's, then the round trips idle and while
// the link is busy. Nothing when there are none.
func LinkMatrices(w io.Writer, ms []analysis.LinkMatrix) error {
	for _, m := range ms {
		fmt.Fprintf(w, "\nNetwork round, %s network: TCP throughput from each row's node to each column's\n", m.Network)
		if err := linkGrid(m, func(l *analysis.Link) string {
			if l.SendBytesPerSec <= 0 {
				return "-"
			}
			return units.MBps(l.SendBytesPerSec)
		}).write(w); err != nil {
			return err
		}
		fmt.Fprintln(w, "\nRound trip p50 / p99 of 64-byte blocks: link idle -> busy with a transfer")
		if err := linkGrid(m, func(l *analysis.Link) string {
			return fmt.Sprintf("%s / %s -> %s / %s", units.Latency(l.IdleP50), units.Latency(l.IdleP99), units.Latency(l.BusyP50), units.Latency(l.BusyP99))
		}).write(w); err != nil {
			return err
		}
		var failed []string
		for _, row := range m.Cells {
			for _, l := range row {
				if l != nil && l.Failed != "" {
					failed = append(failed, fmt.Sprintf("  %s -> %s: %s", l.From, l.To, l.Failed))
				}
			}
		}
		if len(failed) > 0 {
			fmt.Fprintf(w, "Failed:\n%s\n", strings.Join(failed, "\n"))
		}
	}
	return nil
}

// LinkMatricesMarkdown writes the same tables in Markdown.
func LinkMatricesMarkdown(w io.Writer, ms []analysis.LinkMatrix) error {
	for _, m := range ms {
		fmt.Fprintf(w, "\n### Network round, %s network\n\nTCP throughput and round trip p50 (idle -> busy), from each row's node to each column's.\n\n", m.Network)
		fmt.Fprintf(w, "| from \\ to | %s |\n|---|%s\n", strings.Join(mdCells(m.Nodes), " | "), strings.Repeat("---|", len(m.Nodes)))
		for i, from := range m.Nodes {
			cells := make([]string, len(m.Nodes))
			for j, l := range m.Cells[i] {
				switch {
				case l == nil:
					cells[j] = "-"
				case l.Failed != "" && l.SendBytesPerSec == 0:
					cells[j] = "failed: " + mdEscape(l.Failed)
				default:
					cells[j] = fmt.Sprintf("%s, %s -> %s", units.MBps(l.SendBytesPerSec), units.Latency(l.IdleP50), units.Latency(l.BusyP50))
				}
			}
			fmt.Fprintf(w, "| %s | %s |\n", mdEscape(from), strings.Join(cells, " | "))
		}
	}
	return nil
}

func mdCells(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdEscape(n)
	}
	return out
}

func linkGrid(m analysis.LinkMatrix, cell func(*analysis.Link) string) *grid {
	g := &grid{left: 1}
	g.add(append([]string{"FROM \\ TO"}, m.Nodes...)...)
	for i, from := range m.Nodes {
		row := []string{from}
		for _, l := range m.Cells[i] {
			if l == nil {
				row = append(row, "")
				continue
			}
			row = append(row, cell(l))
		}
		g.add(row...)
	}
	return g
}
