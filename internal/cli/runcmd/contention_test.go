package runcmd

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func TestContentionFlags(t *testing.T) {
	tests := []struct {
		name     string
		f        flags
		suiteSet bool
		probe    string // want, or "" for an error
		err      string
	}{
		{"default probe", flags{round: "contention"}, false, "etcd-fdatasync", ""},
		{"built-in workload", flags{round: "contention", probe: "rand-read-4k-qd1"}, false, "rand-read-4k-qd1", ""},
		{"suite of one", flags{round: "contention", probe: "etcd"}, false, "etcd-fdatasync", ""},
		{"workload of --suite", flags{round: "contention", suite: "quick", probe: "seq-read"}, true, "seq-read", ""},
		{"unknown probe", flags{round: "contention", probe: "nope"}, false, "", "--probe nope: no built-in workload"},
		{"--suite with many workloads", flags{round: "contention", suite: "quick"}, true, "", "choose the probe with --probe"},
		{"probe without the round", flags{round: "isolated", probe: "etcd"}, false, "", "add --round contention"},
		{"unknown round", flags{round: "chaos"}, false, "", `--round "chaos"`},
		{"noise target is a target", flags{round: "contention", noiseTarget: "/tmp"}, false, "", "is also a --target"},
		{"fio job", flags{round: "contention", fioJob: "testdata/none.fio"}, false, "", "reading fio job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.targets, f.repeat, f.telemetry = []string{"/tmp"}, 1, true
			if f.suite == "" {
				f.suite = "standard"
			}
			plan, err := buildPlan(&f, tt.suiteSet)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Contention == nil || plan.Contention.Probe.Name != tt.probe || plan.Suite != nil || plan.Round != result.RoundContention || !plan.Telemetry {
				t.Errorf("plan %+v", plan)
			}
		})
	}
}

func TestTelemetryFlagOff(t *testing.T) {
	f := flags{suite: "quick", targets: []string{"/tmp"}, repeat: 1, round: "isolated", telemetry: false}
	plan, err := buildPlan(&f, true)
	if err != nil || plan.Telemetry || plan.Contention != nil {
		t.Errorf("plan %+v, %v", plan, err)
	}
}
