package kube

import (
	"context"
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// TargetPrefix marks a Kubernetes target: k8s:STORAGECLASS.
const TargetPrefix = "k8s:"

// Kind is the kind of Kubernetes StorageClasses: k8s:STORAGECLASS, a PVC
// of the class and a pod using it on each chosen node. Its targets are a
// group (runner.KindGroup): one connection to the cluster for every
// class, and a class makes a target per node. Its fields are the
// request's Kubernetes settings.
type Kind struct {
	Cluster kubekit.ConnectOptions
	// Nodes chooses the nodes; its Tolerations are the pod overrides'.
	Nodes  kubekit.NodeChoice
	Target TargetOptions
}

// Name implements runner.Kind.
func (Kind) Name() string { return "k8s" }

// Parse implements runner.Kind: k8s:STORAGECLASS, or an engine target
// from a pod per node (k8s:gluster://SERVER/VOLUME, enginepod.go), the
// nodes chosen apart (Kube.Nodes, Kube.NodeSelector).
func (Kind) Parse(target string) (runner.Spec, bool, error) {
	class, ok := strings.CutPrefix(target, TargetPrefix)
	if !ok {
		return nil, false, nil
	}
	if s, ok, err := parseEngine(class); ok {
		return s, true, err
	}
	name, query, options := strings.Cut(class, "?")
	if options {
		if _, err := parseClassOptions(target, query); err != nil { // class_osds.go
			return nil, true, err
		}
	}
	if name == "" || strings.ContainsAny(name, "@/ ") {
		return nil, true, runner.FieldErrorf("%s: %s: write k8s:STORAGECLASS[?ceph-conf=PATH&ceph-pool=POOL] (choose nodes with %s or %s)",
			runner.Field("Targets"), target, runner.Field("Kube.Nodes"), runner.Field("Kube.NodeSelector"))
	}
	return ClassSpec(class), true, nil
}

// ClassSpec is a StorageClass named as a target (k8s:CLASS); "default" is
// the cluster's default class.
type ClassSpec string

// String implements runner.Spec.
func (s ClassSpec) String() string { return TargetPrefix + string(s) }

// Describe implements runner.Spec.
func (s ClassSpec) Describe() string {
	return fmt.Sprintf("StorageClass %s: a PVC of the class and a pod using it on each chosen node, where fio runs; both removed after the run", string(s))
}

// Target implements runner.Spec: a class's targets are made by Open, one
// per node.
func (ClassSpec) Target(runner.Options) (runner.Target, error) { return nil, runner.ErrGrouped }

// Open implements runner.KindGroup: it connects to the cluster, chooses
// the nodes, resolves each class (k8s:default to the cluster's default,
// said to o.Report) and makes a target per class and node, in class
// order. Nodes left out are said to o.Report; the memory is the largest
// node's. A cluster, node choice or class that the request names wrongly
// is a *runner.RefusedError.
func (k Kind) Open(ctx context.Context, specs []runner.Spec, o runner.GroupOptions) (*runner.Group, error) {
	opts := k.Target
	opts.Report = o.Report
	opts.OSDBenches = &OSDBenches{}
	cluster, err := kubekit.Connect(k.Cluster)
	if err != nil {
		return nil, &runner.RefusedError{Err: err}
	}
	lctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	choice := k.Nodes
	choice.Tolerations = kubekit.OverrideTolerations(opts.PodOverrides)
	nodes, skipped, err := kubekit.ResolveNodes(lctx, cluster.Client, choice)
	if err != nil {
		return nil, &runner.RefusedError{Err: fmt.Errorf("choosing nodes on %s: %w", cluster.Host, err)}
	}
	classes := make([]string, len(specs))
	for i, s := range specs {
		if _, engine := s.(EngineSpec); engine {
			continue
		}
		name, note, err := kubekit.ResolveClass(lctx, cluster.Client, classOf(s))
		if err != nil {
			return nil, &runner.RefusedError{Err: err}
		}
		if note != "" && o.Report != nil {
			o.Report("", note)
		}
		classes[i] = name
	}
	mem := runner.Memory{Whose: "the largest node's memory"}
	var known bool
	if mem.Bytes, known, err = kubekit.NodeMemory(lctx, cluster.Client, nodes); err != nil {
		return nil, err
	}
	if !known {
		mem = runner.Memory{Err: fmt.Errorf("the nodes' memory is unknown (no node reports one, or storbench may not read nodes)")}
	}
	g := &runner.Group{Memory: []runner.Memory{mem}}
	for i, class := range classes {
		es, engine := specs[i].(EngineSpec)
		run := &engineRun{engine: bindEngine(es.engine, cluster)}
		for _, n := range nodes {
			if engine {
				g.Targets = append(g.Targets, newEngineTarget(cluster, run, n, len(g.Targets)+1, opts))
			} else {
				g.Targets = append(g.Targets, NewTarget(cluster, class, n, len(g.Targets)+1, withCeph(opts, specs[i])))
			}
		}
	}
	for _, s := range skipped {
		if o.Report != nil {
			o.Report("", "skipping node "+s)
		}
	}
	return g, nil
}

var _ runner.KindDoctor = Kind{}

// Doctor implements runner.KindDoctor: a class is checked with the
// cluster (storbench doctor's K8s checks), not as a target; an engine
// target's engine is checked where storbench runs.
func (k Kind) Doctor(ctx context.Context, specs []runner.Spec, o runner.Options) []result.Check {
	var out []result.Check
	for _, s := range specs {
		if es, ok := s.(EngineSpec); ok {
			eng := es.engine
			if _, ok := eng.(clusterEngine); ok {
				if c, err := kubekit.Connect(k.Cluster); err == nil {
					eng = bindEngine(eng, c)
				}
			}
			out = append(out, eng.doctor(ctx, o)...)
			continue
		}
		out = append(out, result.Check{Area: "targets", Name: s.String(), Status: result.CheckInfo,
			Detail: "Kubernetes classes are checked with the cluster (K8s)"})
	}
	return out
}

var _ runner.KindRunOnly = Kind{}

// RunOnly implements runner.KindRunOnly: a dry run creates no PVC or pod.
func (Kind) RunOnly() {}
