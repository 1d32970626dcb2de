package render

import "io"

// Columns writes a plain-text table: the header and rows, the first left
// columns left-aligned (names) and the rest right-aligned (figures), two
// spaces apart, cells escaped for a terminal. For tables whose cells are
// already formatted, such as the figures a bench program prints.
func Columns(w io.Writer, left int, header []string, rows [][]string) error {
	g := grid{left: left}
	g.add(header...)
	for _, r := range rows {
		g.add(r...)
	}
	return g.write(w)
}
