package testenv

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
)

// interrupts are the undos registered with OnInterrupt, by registration
// order, and the channel their signal handler reads while any is.
var interrupts struct {
	sync.Mutex
	next  int
	undos map[int]interruptUndo
	ch    chan os.Signal
}

type interruptUndo struct {
	what string
	undo func()
}

// OnInterrupt runs undo if the test binary gets SIGINT or SIGTERM (Ctrl-C
// on go test, or scripts/test.sh stopping) before done is called: t.Cleanup
// does not run then, and what a test made outside its temporary directory
// (a standalone Ceph's or GlusterFS's daemons, namespaces and links)
// would stay. Every undo still registered runs, the last registered
// first, then the binary exits with 130 (SIGINT) or 143 (SIGTERM). While
// none is registered the signals keep their default action. what names
// the undo in the binary's last lines.
func OnInterrupt(what string, undo func()) (done func()) {
	interrupts.Lock()
	defer interrupts.Unlock()
	if len(interrupts.undos) == 0 {
		interrupts.undos = map[int]interruptUndo{}
		interrupts.ch = make(chan os.Signal, 1)
		signal.Notify(interrupts.ch, os.Interrupt, syscall.SIGTERM)
		go onInterrupt(interrupts.ch)
	}
	id := interrupts.next
	interrupts.next++
	interrupts.undos[id] = interruptUndo{what: what, undo: undo}
	return func() {
		interrupts.Lock()
		defer interrupts.Unlock()
		if _, ok := interrupts.undos[id]; !ok {
			return
		}
		delete(interrupts.undos, id)
		if len(interrupts.undos) == 0 {
			signal.Stop(interrupts.ch)
			close(interrupts.ch)
		}
	}
}

// onInterrupt waits for a signal on ch (closed once nothing is
// registered), then runs the undos and exits.
func onInterrupt(ch chan os.Signal) {
	sig, ok := <-ch
	if !ok {
		return
	}
	interrupts.Lock() // held to the exit: nothing registers or undoes meanwhile
	ids := make([]int, 0, len(interrupts.undos))
	for id := range interrupts.undos {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range slices.Backward(ids) {
		u := interrupts.undos[id]
		fmt.Fprintf(os.Stderr, "testenv: %v: undoing %s\n", sig, u.what)
		u.undo()
	}
	code := 130
	if sig == syscall.SIGTERM {
		code = 143
	}
	os.Exit(code)
}
