package runner

import (
	"context"
	"time"

	"github.com/storbench/storbench/internal/execx"
)

// Clients is a Target whose saturation sweep (docs/sweep.md) runs each
// client in a place of its own (a Kubernetes pod with its own volume, or
// its own pod on a shared ReadWriteMany volume) rather than as one more
// job of the target's fio. The engine's sweep uses it when a target has
// it and otherwise runs a step's N clients as N jobs of one fio in the
// target's work directory.
type Clients interface {
	Target
	// ClientGroup names the targets whose clients run a step together
	// and whose aggregate is one result ("k8s:CLASS": every chosen node
	// of the class).
	ClientGroup() string
	// Clients readies n clients for a step on p (what Prepare returned
	// for this target), reusing those of earlier steps and making only
	// the ones missing, and returns them in order, client 1 first. Each
	// client runs its own fio through its Cmder on its own file.
	Clients(ctx context.Context, p *Prepared, need Need, n int) ([]Client, error)
	// ReleaseClients removes every client Clients made and the files the
	// sweep left on the target's volumes, waiting for them to go. It must
	// be safe to call with a fresh context after the run's is cancelled,
	// and after Clients failed half-way.
	ReleaseClients(ctx context.Context) error
	// ClientStart is how long making the clients of one step takes at
	// most when they are made together (a pod scheduled with its volume
	// bound and fio ready): the sweep's estimate counts it per step.
	ClientStart() time.Duration
}

// Client is one client of a sweep step.
type Client struct {
	// Name names the client in messages ("pod storbench-…-c2").
	Name string
	// Cmder reaches the place the client's fio runs.
	Cmder execx.Cmder
	// Dir is the client's fio working directory; clients of one target
	// may share it (a shared volume), so their files and logs are named
	// by their number.
	Dir string
}

// labelledClients is a labelled target whose clients run apart.
type labelledClients struct {
	labelled
	clients Clients
}

func (l labelledClients) ClientGroup() string { return l.clients.ClientGroup() }

func (l labelledClients) Clients(ctx context.Context, p *Prepared, need Need, n int) ([]Client, error) {
	return l.clients.Clients(ctx, p, need, n)
}

func (l labelledClients) ReleaseClients(ctx context.Context) error {
	return l.clients.ReleaseClients(ctx)
}

func (l labelledClients) ClientStart() time.Duration { return l.clients.ClientStart() }
