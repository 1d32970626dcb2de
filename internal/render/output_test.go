package render

import (
	"bytes"
	"io"
	"testing"
)

func TestFormatted(t *testing.T) {
	text := func(w io.Writer, v []string) error { return Columns(w, [][]string{{"NAME", "SIZE"}, v}) }
	for _, tc := range []struct{ format, want string }{
		{"json", "[\n  \"results.db\",\n  \"1.0 MiB\"\n]\n"},
		{"table", "NAME        SIZE\nresults.db  1.0 MiB\n"},
		{"", "NAME        SIZE\nresults.db  1.0 MiB\n"},
	} {
		var out bytes.Buffer
		if err := Formatted(&out, tc.format, []string{"results.db", "1.0 MiB"}, text); err != nil || out.String() != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.format, out.String(), err, tc.want)
		}
	}
}
