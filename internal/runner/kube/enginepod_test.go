package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// countingEngine records its setups and teardowns.
type countingEngine struct {
	ups, downs []string
	failUp     bool
}

func (c *countingEngine) String() string   { return "test://engine" }
func (c *countingEngine) Describe() string { return "a test engine" }
func (c *countingEngine) setUp(_ context.Context, runID string) (map[string]string, []string, error) {
	if c.failUp {
		return nil, nil, errors.New("setup failed")
	}
	c.ups = append(c.ups, runID)
	return map[string]string{"k": "v"}, nil, nil
}
func (c *countingEngine) tearDown(_ context.Context, runID string) error {
	c.downs = append(c.downs, runID)
	return nil
}
func (c *countingEngine) file(string, string, int64) fio.File                   { return fio.File{} }
func (c *countingEngine) owned(string) []string                                 { return nil }
func (c *countingEngine) doctor(context.Context, runner.Options) []result.Check { return nil }

// The engine's shared setup is made by the first node's Prepare and torn
// down by the last node's cleanup: once for nodes prepared together
// (parallel), once per node for nodes prepared one after the other
// (isolated); a failed setup leaves nothing to tear down.
func TestEngineRunSharesSetup(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		steps     string // a: acquire, r: release
		failUp    bool
		ups, down int
	}{
		{"together", "aaarrr", false, 1, 1},
		{"one after the other", "ararar", false, 3, 3},
		{"setup fails", "a", true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &countingEngine{failUp: tt.failUp}
			r := &engineRun{engine: e}
			for _, s := range tt.steps {
				if s == 'a' {
					l, _, err := r.acquire(ctx, "RUN1")
					if (err != nil) != tt.failUp || (err == nil && l["k"] != "v") {
						t.Fatalf("acquire: %v, %v", l, err)
					}
				} else if err := r.release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if len(e.ups) != tt.ups || len(e.downs) != tt.down {
				t.Errorf("%d setups, %d teardowns: want %d, %d", len(e.ups), len(e.downs), tt.ups, tt.down)
			}
		})
	}
}

// Each node's fio writes its own file in the run's directory, which the
// run owns.
func TestGlusterEngineFiles(t *testing.T) {
	s, ok, err := Kind{}.Parse("k8s:gluster://10.0.0.5/vol1")
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	es := s.(EngineSpec)
	f := es.engine.file("RUN1", "node-a", 1<<20)
	if f.Name != "sb-RUN1/node-a.dat" || f.Size != 1<<20 || f.Engine == nil || f.Engine.IOEngine != "gfapi_async" {
		t.Errorf("file %+v", f)
	}
	if got := es.engine.owned("RUN1"); len(got) != 1 || got[0] != "gluster:vol1/sb-RUN1" {
		t.Errorf("owned %v", got)
	}
	if !strings.Contains(es.Describe(), "from a pod") || es.String() != "k8s:gluster://10.0.0.5/vol1" {
		t.Errorf("spec %s: %s", es, es.Describe())
	}
}
