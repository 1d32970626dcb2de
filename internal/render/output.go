package render

import "io"

// Formatted writes v as indented JSON when format is "json", else with
// text: the --output choice every command offers.
func Formatted[T any](w io.Writer, format string, v T, text func(io.Writer, T) error) error {
	if format == "json" {
		return JSON(w, v)
	}
	return text(w, v)
}
