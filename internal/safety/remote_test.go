package safety_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/safety/safetytest"
)

// TestCmderFactsReadThroughTheRunner judges devices the way a Kubernetes
// Block-mode volume is judged, through commands (here run locally): with
// blockdev and without it (size from /sys), signatures at the start and at
// the end are found, and a blank volume passes.
func TestCmderFactsReadThroughTheRunner(t *testing.T) {
	byName := map[string]safetytest.Case{}
	for _, c := range safetytest.Cases() {
		byName[c.Name] = c
	}
	for _, path := range []string{"", "/usr/bin:/bin"} {
		for _, name := range []string{"ext4", "zfs", "md-0.90", "md-1.0", "luks2-secondary-only", "gpt-4096", "blank"} {
			t.Run(name+" PATH="+path, func(t *testing.T) {
				c, ok := byName[name]
				if !ok {
					c = safetytest.Case{Name: "blank", Size: 16 << 20, Setup: func(testing.TB, string) {}}
				}
				dev := c.Device(t)
				if path != "" {
					t.Setenv("PATH", path)
				}
				err := safety.CheckFresh(context.Background(), safety.CmderFacts{Cmder: execx.Local{}}, dev, []string{"w"})
				if name == "blank" {
					if err != nil {
						t.Errorf("blank volume refused: %v", err)
					}
					return
				}
				var r *safety.Refusal
				if !errors.As(err, &r) || !strings.Contains(err.Error(), c.Magic) || !strings.Contains(err.Error(), "already holds data") {
					t.Errorf("want a refusal naming %q, got %v", c.Magic, err)
				}
			})
		}
	}
}
