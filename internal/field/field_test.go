package field

import (
	"errors"
	"io"
	"testing"
)

func TestRender(t *testing.T) {
	const nodes Name = "NodeChoice.Names"
	err := Errorf("%s: node %q does not exist: %w", nodes, "n1", io.EOF)
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"as the request names it", err.Error(), `NodeChoice.Names: node "n1" does not exist: EOF`},
		{"as the caller names it", err.Render(func(Name) string { return "--nodes" }), `--nodes: node "n1" does not exist: EOF`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	if !errors.Is(err, io.EOF) {
		t.Error("the wrapped error is lost")
	}
}
