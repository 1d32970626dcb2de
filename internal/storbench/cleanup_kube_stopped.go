package storbench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/inventory"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// startRecord is how the node-failure check's start command is recorded
// on the node it stops, for cleanup --k8s after a killed run: the command
// for that node, the inventory (an absolute path) and its host.
func startRecord(req NodeFailureRequest) kubekit.NodeStart {
	inv, err := filepath.Abs(req.Inventory)
	if err != nil {
		inv = req.Inventory
	}
	host := req.Host
	if host == "" {
		host = req.Node
	}
	return kubekit.NodeStart{Command: strings.ReplaceAll(req.StartCommand, "{node}", req.Node), Inventory: inv, Host: host}
}

// startStoppedNode brings back a node a killed run's node-failure check
// stopped (kubekit.MarkStopped): only that node, only with the start command
// that run recorded on it, run over SSH on the recorded inventory host, and
// only while the node is not Ready. The record goes once the node is
// Ready; a node storbench cannot start keeps it, and the notes say how to
// start it.
func startStoppedNode(ctx context.Context, c *kubekit.Cluster, req KubeCleanupRequest, m kubekit.NodeMark, rep *result.KubeCleanup) {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, m.Node, metav1.GetOptions{})
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("could not read node %s, which storbench run %s stopped: %v", m.Node, m.RunID, err))
		return
	}
	// The node's annotation names the run, and the command it recorded;
	// the command run is the one this machine kept before the stop.
	onNode := kubekit.NodeStart{}
	if m.Start != nil {
		onNode = *m.Start
	}
	dir := stateDir(req.StateDir)
	start, where, recErr := loadStopRecord(dir, m.RunID, m.Node)
	if recErr != nil && !kubekit.NodeReady(*n) && onNode.Command != "" {
		rep.Notes = append(rep.Notes, fmt.Sprintf("node %s is still down: storbench run %s stopped it, and the node's annotation names its start command (%s), "+
			"but this machine has no record of it (%v): storbench runs only a start command it kept itself before the stop (anyone who may patch nodes can write an annotation); "+
			"start the node yourself, or run cleanup --k8s where run %s ran", m.Node, m.RunID, onNode, recErr, m.RunID))
		return
	}
	switch {
	case kubekit.NodeReady(*n):
		if req.DryRun {
			rep.Notes = append(rep.Notes, fmt.Sprintf("would forget that storbench run %s stopped node %s: it is Ready again", m.RunID, m.Node))
			return
		}
		liftStopRecord(ctx, c, m, rep, fmt.Sprintf("node %s, which storbench run %s stopped, is Ready again: nothing to start", m.Node, m.RunID))
		dropStopRecord(dir, m.RunID, m.Node)
		return
	case start.Command == "":
		rep.Notes = append(rep.Notes, fmt.Sprintf("node %s is still down: storbench run %s stopped it and had no start command; start it yourself (on k3s: sudo systemctl start k3s-agent on the node; after a power-off, power it on), then run cleanup again", m.Node, m.RunID))
		return
	case req.DryRun:
		rep.Notes = append(rep.Notes, fmt.Sprintf("would start node %s, which storbench run %s stopped and did not start again, with %s", m.Node, m.RunID, start))
		return
	}
	began := time.Now()
	if err := runStartRecord(ctx, start); err != nil {
		rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: result.KubeObject{Kind: "node", Name: m.Node, RunID: m.RunID}, Error: err.Error()})
		rep.Notes = append(rep.Notes, fmt.Sprintf("could NOT start node %s, which storbench run %s stopped, with %s: %v", m.Node, m.RunID, start, err))
		return
	}
	wait := max(req.Timeout, 2*time.Minute)
	if err := waitReady(ctx, c, m.Node, wait); err != nil {
		rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: result.KubeObject{Kind: "node", Name: m.Node, RunID: m.RunID}, Error: err.Error()})
		rep.Notes = append(rep.Notes, fmt.Sprintf("started node %s with %s, but it is not Ready: %v", m.Node, start, err))
		return
	}
	liftStopRecord(ctx, c, m, rep, fmt.Sprintf("started node %s, which storbench run %s stopped and did not start again (killed while it was down): ran %s (kept in %s); Ready after %s",
		m.Node, m.RunID, start, where, time.Since(began).Round(time.Second)))
	dropStopRecord(dir, m.RunID, m.Node)
}

// runStartRecord runs a recorded start command over SSH on its host.
func runStartRecord(ctx context.Context, start kubekit.NodeStart) error {
	inv, err := inventory.Load(start.Inventory)
	if err != nil {
		return err
	}
	o, err := hostOf(inv, start.Host, NodeFailureRequest{Inventory: start.Inventory})
	if err != nil {
		return err
	}
	return runOverSSH(ctx, o, start.Command)
}

func liftStopRecord(ctx context.Context, c *kubekit.Cluster, m kubekit.NodeMark, rep *result.KubeCleanup, note string) {
	if err := kubekit.UndoNodeMark(ctx, c.Client, m); err != nil {
		rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: result.KubeObject{Kind: "node", Name: m.Node, RunID: m.RunID}, Error: err.Error()})
		return
	}
	rep.Notes = append(rep.Notes, note)
}

// waitReady polls a node until it is Ready, within d.
func waitReady(ctx context.Context, c *kubekit.Cluster, node string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err == nil && kubekit.NodeReady(*n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready within %s", node, d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
