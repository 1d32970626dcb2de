package runner

import (
	"context"
	"maps"
)

// Labelled returns t with labels added to every Prepared it returns, as a
// user's --label adds them for one target (the replication facts of a
// network volume, say). The wrapper is a plain Target: optional
// interfaces t implements (Checker...) are not passed through, but for
// Clients (clients.go), which decides how a sweep runs on it.
func Labelled(t Target, labels map[string]string) Target {
	l := labelled{Target: t, labels: labels}
	if c, ok := t.(Clients); ok {
		return labelledClients{labelled: l, clients: c}
	}
	return l
}

type labelled struct {
	Target
	labels map[string]string
}

func (l labelled) Prepare(ctx context.Context, need Need) (*Prepared, error) {
	p, err := l.Target.Prepare(ctx, need)
	if err == nil {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		maps.Copy(p.Labels, l.labels)
	}
	return p, err
}
