package glustertest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// TestVolume: the harness's volume keeps every copy on every brick, goes on
// writing with one brick killed, and leaves nothing behind.
func TestVolume(t *testing.T) {
	var v *Volume
	t.Run("up", func(t *testing.T) {
		v = Start(t, Options{})
		t.Logf("bring-up %.1f s", v.BringUp.Seconds())
		data := make([]byte, 4<<20)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(data)
		if err := os.WriteFile(filepath.Join(v.Mount, "a"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, n := range v.Nodes {
			got, err := os.ReadFile(filepath.Join(n.Brick, "a"))
			if err != nil || sha256.Sum256(got) != want {
				t.Fatalf("brick %s on %s: not the data written (%v)", n.Brick, n.Addr, err)
			}
		}
		v.Brick(t, "kill", 2)
		if err := os.WriteFile(filepath.Join(v.Mount, "b"), data, 0o644); err != nil {
			t.Fatalf("writing with a brick killed: %v", err)
		}
		if got, err := os.ReadFile(filepath.Join(v.Nodes[0].Brick, "b")); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("after a brick was killed, brick 1 lacks the write (%v)", err)
		}
		v.Brick(t, "start", 2)
	})
	if v != nil {
		CheckClean(t, v)
	}
}
