package render

import (
	"io"
	"strings"
	"unicode/utf8"
)

// grid is a plain-text table whose first `left` columns are left-aligned
// (names) and the rest right-aligned (figures), two spaces apart.
type grid struct {
	left int
	rows [][]string
}

// add appends a row; cells are escaped for a terminal (see Terminal).
func (g *grid) add(cells ...string) { g.rows = append(g.rows, terminalCells(cells)) }

func (g *grid) write(w io.Writer) error {
	var widths []int
	for _, r := range g.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range g.rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < g.left {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad + c)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
