package telemetry

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// replay feeds the recorded snapshots testdata/<class>/t0..tN to an
// accumulator, one second apart, as a Recording would have seen them.
func replay(t *testing.T, class string, cfg Config) *result.Telemetry {
	t.Helper()
	dir := filepath.Join("testdata", class)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "t") {
			snaps = append(snaps, e.Name())
		}
	}
	sort.Slice(snaps, func(i, j int) bool {
		a, _ := strconv.Atoi(snaps[i][1:])
		b, _ := strconv.Atoi(snaps[j][1:])
		return a < b
	})
	if len(snaps) < 2 {
		t.Fatalf("%s: need at least two snapshots", dir)
	}
	cfg.Root = filepath.Join(dir, snaps[0])
	acc := newAccumulator(New(cfg))
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for i, s := range snaps {
		c := cfg
		c.Root = filepath.Join(dir, s)
		acc.add(New(c).read(start.Add(time.Duration(i)*time.Second), nil))
	}
	return acc.telemetry()
}
