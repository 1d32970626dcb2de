package storbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/storbench/storbench/internal/kubekit"
)

// DefaultStateDir is where storbench keeps, on this machine, what must
// outlive a run that is killed: $XDG_STATE_HOME/storbench, else
// ~/.local/state/storbench.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "storbench")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "storbench-state")
	}
	return filepath.Join(home, ".local", "state", "storbench")
}

// A stop record is the start command of a node the node-failure check is
// about to stop, kept on this machine before the stop (the node's own
// annotation says which run stopped it, but anyone who may patch nodes
// can write an annotation: cleanup runs only a command it finds here).
func stopRecordPath(dir, runID, node string) (string, error) {
	for _, s := range []string{runID, node} {
		if s == "" || strings.ContainsAny(s, `/\`) || strings.HasPrefix(s, ".") {
			return "", fmt.Errorf("stop record: unusable name %q", s)
		}
	}
	return filepath.Join(dir, "stopped-nodes", runID+"_"+node+".json"), nil
}

func saveStopRecord(dir, runID, node string, start kubekit.NodeStart) error {
	p, err := stopRecordPath(dir, runID, node)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("recording how to start node %s: %w", node, err)
	}
	b, err := json.Marshal(start)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("recording how to start node %s: %w", node, err)
	}
	return nil
}

// loadStopRecord returns the record and its path; an error wrapping
// os.ErrNotExist when this machine has none.
func loadStopRecord(dir, runID, node string) (kubekit.NodeStart, string, error) {
	var s kubekit.NodeStart
	p, err := stopRecordPath(dir, runID, node)
	if err != nil {
		return s, "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return s, p, err
	}
	if len(b) > 64<<10 {
		return s, p, fmt.Errorf("%s: %d bytes, not a stop record", p, len(b))
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, p, fmt.Errorf("%s: %w", p, err)
	}
	return s, p, nil
}

func dropStopRecord(dir, runID, node string) {
	if p, err := stopRecordPath(dir, runID, node); err == nil {
		os.Remove(p)
	}
}

func stateDir(d string) string {
	if d == "" {
		return DefaultStateDir()
	}
	return d
}
