package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Formatted writes v as indented JSON when format is "json", else with
// text: the --output choice every command offers.
func Formatted[T any](w io.Writer, format string, v T, text func(io.Writer, T) error) error {
	if format == "json" {
		return JSON(w, v)
	}
	return text(w, v)
}

// Columns writes rows as left-aligned columns two spaces apart, the first
// row being the header: a plain table for tools' reports (bench programs).
func Columns(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if _, err := fmt.Fprintln(tw, strings.Join(r, "\t")); err != nil {
			return err
		}
	}
	return tw.Flush()
}
