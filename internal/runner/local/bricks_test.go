package local

import (
	"testing"
	"time"

	"github.com/storbench/storbench/internal/netfs"
)

// TestBrickFigures: a brick's workload is its operations since the reading
// before (its profile was reset then) and its bytes in between; a brick
// the reading before did not list gets no bytes; a lost one says so.
func TestBrickFigures(t *testing.T) {
	ms := time.Millisecond
	before := []netfs.BrickStat{{Xlator: "v-client-0", Connected: true, BytesWritten: 1000, BytesRead: 50},
		{Xlator: "v-client-1", Connected: true, BytesWritten: 900, BytesRead: 40}}
	after := []netfs.BrickStat{
		{Xlator: "v-client-0", Host: "a", Brick: "/b", Connected: true, BytesWritten: 41 << 20, BytesRead: 90,
			Ops: map[string]netfs.FopLatency{"WRITE": {Count: 320, Total: 320 * 2 * ms}, "READ": {Count: 4, Total: 4 * ms}}},
		{Xlator: "v-client-1", Host: "b", Brick: "/b", Connected: false, BytesWritten: 900, BytesRead: 40},
		{Xlator: "v-client-2", Host: "c", Brick: "/b", Connected: true, BytesWritten: 5},
	}
	got := brickFigures(before, after)
	if len(got) != 3 {
		t.Fatalf("%d bricks", len(got))
	}
	a := got[0]
	if a.Host != "a" || !a.Connected || a.Writes != 320 || a.WriteLatency != 2*ms || a.Reads != 4 || a.ReadLatency != ms ||
		a.BytesSent != 41<<20-1000 || a.BytesReceived != 40 {
		t.Errorf("brick a: %+v", a)
	}
	if got[1].Connected || got[1].Writes != 0 || got[1].BytesSent != 0 {
		t.Errorf("lost brick b: %+v", got[1])
	}
	if got[2].BytesSent != 0 {
		t.Errorf("brick c, not read before: %+v", got[2])
	}
}
