package ceph

import (
	"reflect"
	"testing"
)

// osd-dump-*, pg-stat-*, health-* and config-key-ls.json were captured from
// test/cluster/ceph.sh's standalone Ceph 16.2.15 (three OSDs, pool rbd of
// size 3): whole, then with osd.1 held down (ceph osd add-noup osd.1;
// ceph osd down osd.1).

func TestParseOSDDump(t *testing.T) {
	for _, tc := range []struct {
		file     string
		up, noup []bool
	}{
		{"osd-dump-clean.json", []bool{true, true, true}, []bool{false, false, false}},
		{"osd-dump-noup-down.json", []bool{true, false, true}, []bool{false, true, false}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m, err := ParseOSDDump(read(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var up, noup []bool
			for _, o := range m.OSDs {
				up, noup = append(up, o.Up), append(noup, o.NoUp())
				if !o.In {
					t.Errorf("osd.%d out", o.ID)
				}
			}
			if !reflect.DeepEqual(up, tc.up) || !reflect.DeepEqual(noup, tc.noup) {
				t.Errorf("up %v noup %v, want %v %v", up, noup, tc.up, tc.noup)
			}
			if m.Epoch == 0 || m.Flags == "" {
				t.Errorf("epoch %d flags %q", m.Epoch, m.Flags)
			}
		})
	}
}

func TestParsePGStatAndHealth(t *testing.T) {
	for _, tc := range []struct {
		pgs, health string
		clean       bool
		degraded    bool
		status      string
		check       string
	}{
		{"pg-stat-clean.json", "health-ok.json", true, false, "HEALTH_OK", ""},
		{"pg-stat-degraded.json", "health-noup.json", false, true, "HEALTH_WARN", "OSD_DOWN"},
	} {
		t.Run(tc.pgs, func(t *testing.T) {
			s, err := ParsePGStat(read(t, tc.pgs))
			if err != nil {
				t.Fatal(err)
			}
			if s.Total == 0 || s.Clean() != tc.clean || (s.Degraded() > 0) != tc.degraded {
				t.Errorf("%s: clean %t degraded %d, want %t %t", s, s.Clean(), s.Degraded(), tc.clean, tc.degraded)
			}
			h, err := ParseHealth(read(t, tc.health))
			if err != nil {
				t.Fatal(err)
			}
			found := tc.check == ""
			for _, c := range h.Checks {
				found = found || len(c) > len(tc.check) && c[:len(tc.check)] == tc.check
			}
			if h.Status != tc.status || !found {
				t.Errorf("health %+v, want %s with %s", h, tc.status, tc.check)
			}
		})
	}
}

func TestHeldDownKeys(t *testing.T) {
	b := read(t, "config-key-ls.json")
	for _, tc := range []struct {
		runID string
		want  []string
	}{
		{"", []string{"storbench/osd-held-down/RUN1/osd.1"}},
		{"RUN1", []string{"storbench/osd-held-down/RUN1/osd.1"}},
		{"RUN", nil},
	} {
		got, err := HeldDownKeys(b, tc.runID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("run %q: %v, want %v", tc.runID, got, tc.want)
		}
	}
	h := HeldDown{OSD: 1, RunID: "RUN1"}
	if h.Key() != "storbench/osd-held-down/RUN1/osd.1" {
		t.Errorf("key %s", h.Key())
	}
}
