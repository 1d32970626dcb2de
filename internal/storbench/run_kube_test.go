package storbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/store"
)

func TestKubeTargetsAndRounds(t *testing.T) {
	tests := []struct {
		name    string
		targets []string
		rounds  []string
		round   string
		classes []string
		want    []string // the plan's rounds
		err     string
	}{
		{name: "k8s targets collect classes", targets: []string{"k8s:longhorn", "/tmp", "k8s:local-path"}, classes: []string{"longhorn", "local-path"}},
		{name: "parallel round", targets: []string{"k8s:a"}, rounds: []string{"isolated", "parallel"}, classes: []string{"a"}, want: []string{"isolated", "parallel"}},
		{name: "parallel of local targets", targets: []string{"/tmp", "/var/tmp"}, rounds: []string{"parallel"}, want: []string{"parallel"}},
		{name: "unknown round", targets: []string{"k8s:a"}, rounds: []string{"sideways"}, err: `Rounds "sideways"`},
		{name: "round twice", targets: []string{"k8s:a"}, rounds: []string{"parallel", "parallel"}, err: "names parallel twice"},
		{name: "parallel with contention", targets: []string{"/tmp"}, round: "contention", rounds: []string{"parallel"}, err: "separate experiments"},
		{name: "empty class", targets: []string{"k8s:"}, err: "write k8s:STORAGECLASS"},
		{name: "node in the target", targets: []string{"k8s:a@node1"}, err: "Kube.Nodes or Kube.NodeSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request(func(r *RunRequest) {
				r.Suite, r.Targets = "quick", tt.targets
				if tt.rounds != nil {
					r.Rounds = tt.rounds
				}
				if tt.round != "" {
					r.Round, r.Probe = tt.round, "seq-read"
				}
			})
			p := planOrRefusal(t, r, tt.err)
			if p == nil {
				return
			}
			var classes []string
			if g := p.group(kube.Kind{}.Name()); g != nil {
				for _, s := range g.specs {
					classes = append(classes, strings.TrimPrefix(s.String(), kube.TargetPrefix))
				}
			}
			if strings.Join(classes, ",") != strings.Join(tt.classes, ",") {
				t.Errorf("classes %v, want %v", classes, tt.classes)
			}
			if strings.Join(p.plan.Rounds, ",") != strings.Join(tt.want, ",") {
				t.Errorf("rounds %v, want %v", p.plan.Rounds, tt.want)
			}
			if len(p.plan.Targets)+len(classes) != len(tt.targets) {
				t.Errorf("%d local targets and %d classes for %v", len(p.plan.Targets), len(classes), tt.targets)
			}
		})
	}
}

// TestKubeRequestErrors covers mistakes caught before any cluster is
// contacted, and a cluster that cannot be reached.
func TestKubeRequestErrors(t *testing.T) {
	overrides := filepath.Join(t.TempDir(), "o.yaml")
	if err := os.WriteFile(overrides, []byte("- not a mapping\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(k *KubeRequest)
		err  string
	}{
		{"volume mode", func(k *KubeRequest) { k.VolumeMode = "Raw" }, `Kube.VolumeMode "Raw"`},
		{"read-only access", func(k *KubeRequest) { k.AccessMode = "ReadOnlyMany" }, "fio must write"},
		{"access mode", func(k *KubeRequest) { k.AccessMode = "Sometimes" }, `Kube.AccessMode "Sometimes"`},
		{"pull policy", func(k *KubeRequest) { k.PullPolicy = "Sometimes" }, "Kube.PullPolicy"},
		{"size", func(k *KubeRequest) { k.Size = "lots" }, `Kube.Size "lots"`},
		{"negative size", func(k *KubeRequest) { k.Size = "-1Gi" }, "must be positive"},
		{"timeout", func(k *KubeRequest) { k.Timeout = 0 }, "Kube.Timeout"},
		{"overrides", func(k *KubeRequest) { k.PodOverrides = overrides }, "TargetOptions.PodOverrides"},
		{"no kubeconfig", func(k *KubeRequest) { k.Kubeconfig = filepath.Join(t.TempDir(), "missing") }, "kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := DefaultKubeRequest()
			tt.edit(&k)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			kind, err := k.kind()
			if err == nil {
				_, err = kind.Open(ctx, []runner.Spec{kube.ClassSpec("a")}, runner.GroupOptions{})
				err = groupErr(err)
			}
			wantRefused(t, err, tt.err)
		})
	}
}

// A Kubernetes option without a k8s target is refused before anything runs.
func TestKubeOptionWithoutKubeTarget(t *testing.T) {
	r := request(func(r *RunRequest) {
		r.Suite, r.Targets = "quick", []string{t.TempDir()}
		r.Kube = &KubeRequest{NodeSelector: "storage=nvme"}
	})
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	_, err := Run(context.Background(), st, r, &recorder{})
	wantRefused(t, err, "Kube options apply to Kubernetes targets: add Targets k8s:STORAGECLASS")
}

func TestParsePVCSize(t *testing.T) {
	for in, want := range map[string]int64{"10Gi": 10 << 30, "500M": 500e6, "2GiB": 2 << 30, "1073741824": 1 << 30} {
		if got, err := parsePVCSize(in); err != nil || got != want {
			t.Errorf("parsePVCSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"8Ei", "9999999Ei", "99999999999999999999", "9223372036854775808", "8388608TiB"} {
		if got, err := parsePVCSize(in); err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("parsePVCSize(%q) = %d, %v; want too large", in, got, err)
		}
	}
}
