package storbench_test

import (
	"context"
	"errors"
	"testing"

	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func TestHealth(t *testing.T) {
	ctx := context.Background()
	st := openDB(t)
	first := importFiles(t, st, storbench.ImportRequest{Target: "nas:/dev/sdb"}, sample("smartctl-attributes-seagate.txt"))
	second := importFiles(t, st, storbench.ImportRequest{Target: "nas:/dev/sdb"}, sample("smartctl-seagate-failing.txt"))
	importFiles(t, st, storbench.ImportRequest{}, sample("scrutiny-scsi-seagate.json"))

	for _, tc := range []struct {
		name string
		req  storbench.HealthRequest
		want []bool // Healthy() of each record, oldest first
	}{
		{"latest of each target", storbench.HealthRequest{}, []bool{false, false}},
		{"every record", storbench.HealthRequest{All: true}, []bool{true, false, false}},
		{"one target", storbench.HealthRequest{Target: "nas:/dev/sdb", All: true}, []bool{true, false}},
		{"one run", storbench.HealthRequest{Runs: []string{first.RunID}}, []bool{true}},
		{"two runs", storbench.HealthRequest{Runs: []string{first.RunID, second.RunID}}, []bool{true, false}},
		{"nothing", storbench.HealthRequest{Target: "elsewhere"}, []bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, err := storbench.Health(ctx, st, tc.req)
			if err != nil || hs == nil || len(hs) != len(tc.want) {
				t.Fatalf("%d records (%v), want %d", len(hs), err, len(tc.want))
			}
			for i, h := range hs {
				if h.Healthy() != tc.want[i] {
					t.Errorf("record %d (%s) healthy %v, want %v", i, h.Target, h.Healthy(), tc.want[i])
				}
			}
		})
	}
	if _, err := storbench.Health(ctx, st, storbench.HealthRequest{Runs: []string{"20990101"}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
}
