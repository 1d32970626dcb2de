package runcmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/kube"
)

func defaultKube() kubeFlags {
	return kubeFlags{nodes: []string{"all"}, rounds: []string{result.RoundIsolated}, volumeMode: "Filesystem",
		accessMode: "ReadWriteOnce", image: kube.DefaultImage, pullPolicy: "IfNotPresent", timeout: kube.DefaultTimeout}
}

func TestKubeTargetsAndRounds(t *testing.T) {
	tests := []struct {
		name    string
		targets []string
		edit    func(k *kubeFlags)
		round   string
		changed []string
		classes []string
		rounds  []string
		err     string
	}{
		{name: "k8s targets collect classes", targets: []string{"k8s:longhorn", "/tmp", "k8s:local-path"}, classes: []string{"longhorn", "local-path"}},
		{name: "parallel round", targets: []string{"k8s:a"}, edit: func(k *kubeFlags) { k.rounds = []string{"isolated", "parallel"} }, classes: []string{"a"}, rounds: []string{"isolated", "parallel"}},
		{name: "parallel of local targets", targets: []string{"/tmp", "/var/tmp"}, edit: func(k *kubeFlags) { k.rounds = []string{"parallel"} }, rounds: []string{"parallel"}},
		{name: "unknown round", targets: []string{"k8s:a"}, edit: func(k *kubeFlags) { k.rounds = []string{"sideways"} }, err: `--rounds "sideways"`},
		{name: "round twice", targets: []string{"k8s:a"}, edit: func(k *kubeFlags) { k.rounds = []string{"parallel", "parallel"} }, err: "names parallel twice"},
		{name: "parallel with contention", targets: []string{"/tmp"}, round: "contention", edit: func(k *kubeFlags) { k.rounds = []string{"parallel"} }, err: "separate experiments"},
		{name: "empty class", targets: []string{"k8s:"}, err: "write k8s:STORAGECLASS"},
		{name: "node in the target", targets: []string{"k8s:a@node1"}, err: "--nodes or --node-selector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := flags{suite: "quick", targets: tt.targets, repeat: 1, round: result.RoundIsolated, kube: defaultKube()}
			if tt.round != "" {
				f.round, f.probe = tt.round, "seq-read"
			}
			if tt.edit != nil {
				tt.edit(&f.kube)
			}
			plan, err := buildPlan(&f, true)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(f.kube.classes, ",") != strings.Join(tt.classes, ",") {
				t.Errorf("classes %v, want %v", f.kube.classes, tt.classes)
			}
			if strings.Join(plan.Rounds, ",") != strings.Join(tt.rounds, ",") {
				t.Errorf("rounds %v, want %v", plan.Rounds, tt.rounds)
			}
		})
	}
}

// TestKubeFlagErrors covers mistakes caught before any cluster is contacted.
func TestKubeFlagErrors(t *testing.T) {
	overrides := filepath.Join(t.TempDir(), "o.yaml")
	if err := os.WriteFile(overrides, []byte("- not a mapping\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		classes []string
		edit    func(k *kubeFlags)
		changed string
		err     string
	}{
		{"k8s flag without a k8s target", nil, nil, "node-selector", "--node-selector applies to Kubernetes targets"},
		{"volume mode", []string{"a"}, func(k *kubeFlags) { k.volumeMode = "Raw" }, "", `--volume-mode "Raw"`},
		{"read-only access", []string{"a"}, func(k *kubeFlags) { k.accessMode = "ReadOnlyMany" }, "", "fio must write"},
		{"pull policy", []string{"a"}, func(k *kubeFlags) { k.pullPolicy = "Sometimes" }, "", "--image-pull-policy"},
		{"size", []string{"a"}, func(k *kubeFlags) { k.size = "lots" }, "", `--size "lots"`},
		{"negative size", []string{"a"}, func(k *kubeFlags) { k.size = "-1Gi" }, "", "must be positive"},
		{"timeout", []string{"a"}, func(k *kubeFlags) { k.timeout = 0 }, "", "--timeout"},
		{"overrides", []string{"a"}, func(k *kubeFlags) { k.podOverrides = overrides }, "", "--pod-overrides"},
		{"no kubeconfig", []string{"a"}, func(k *kubeFlags) { k.kubeconfig = filepath.Join(t.TempDir(), "missing") }, "", "kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := defaultKube()
			k.classes = tt.classes
			if tt.edit != nil {
				tt.edit(&k)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _, err := kubeTargets(ctx, &k, func(n string) bool { return n == tt.changed }, nil)
			var ee *cli.ExitError
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ee) || ee.Code != cli.ExitUsage {
				t.Fatalf("error %v, want a usage error with %q", err, tt.err)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"10Gi": 10 << 30, "500M": 500e6, "2GiB": 2 << 30, "1073741824": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseSizeTooLarge(t *testing.T) {
	for _, in := range []string{"8Ei", "9999999Ei", "99999999999999999999", "9223372036854775808", "8388608TiB"} {
		if got, err := parseSize(in); err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("parseSize(%q) = %d, %v; want too large", in, got, err)
		}
	}
}
