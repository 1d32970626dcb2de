package release

import (
	"testing"
	"time"
)

// A second build waits for the first's lock, and gets it once released.
func TestOneBuildAtATime(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	unlock, err := oneBuildAtATime()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		second, err := oneBuildAtATime()
		if err != nil {
			t.Error(err)
			second = func() {}
		}
		got <- second
	}()
	select {
	case <-got:
		t.Fatal("a second build got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case second := <-got:
		second()
	case <-time.After(10 * time.Second):
		t.Fatal("the second build did not get the lock once the first released it")
	}
}
