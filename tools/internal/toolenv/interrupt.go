package toolenv

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
)

// pending is what Cleanup registered and has not yet undone, newest last.
var pending struct {
	sync.Mutex
	caught bool
	undos  []*undo
}

type undo struct {
	what string
	f    func()
}

// Cleanup registers f with t.Cleanup and also runs it if the test binary
// is stopped by SIGINT or SIGTERM first (Ctrl-C, or scripts/test.sh
// stopping the suite), which runs no t.Cleanup: a standalone Ceph's or
// GlusterFS's daemons, namespaces and links would stay. On such a signal
// every pending undo runs, newest first, and the binary exits 130
// (SIGINT) or 143 (SIGTERM). The main module's tests do the same with
// testenv.OnInterrupt. what names the undo in the binary's last lines.
func Cleanup(t interface{ Cleanup(func()) }, what string, f func()) {
	u := &undo{what: what, f: f}
	pending.Lock()
	if !pending.caught {
		pending.caught = true
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go undoOnSignal(ch)
	}
	pending.undos = append(pending.undos, u)
	pending.Unlock()
	t.Cleanup(func() {
		pending.Lock()
		pending.undos = slices.DeleteFunc(pending.undos, func(p *undo) bool { return p == u })
		pending.Unlock()
		f()
	})
}

func undoOnSignal(ch chan os.Signal) {
	sig := <-ch
	pending.Lock() // held to the exit
	for _, u := range slices.Backward(pending.undos) {
		fmt.Fprintf(os.Stderr, "toolenv: %v: undoing %s\n", sig, u.what)
		u.f()
	}
	code := 130
	if sig == syscall.SIGTERM {
		code = 143
	}
	os.Exit(code)
}
