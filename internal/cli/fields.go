package cli

import (
	"errors"

	"github.com/storbench/storbench/internal/storbench"
)

// flagOf names each request field the library's errors speak of as the
// command line sets it: the one table from fields to flags.
var flagOf = map[storbench.Field]string{
	storbench.FieldTargets:        "--target",
	storbench.FieldRepeat:         "--repeat",
	storbench.FieldDryRun:         "--dry-run",
	storbench.FieldSuite:          "--suite",
	storbench.FieldFioJob:         "--fio-job",
	storbench.FieldWorkloads:      "--workloads",
	storbench.FieldLabels:         "--label",
	storbench.FieldDestructive:    "--destructive",
	storbench.FieldRound:          "--round",
	storbench.FieldRounds:         "--rounds",
	storbench.FieldProbe:          "--probe",
	storbench.FieldNoiseTarget:    "--noise-target",
	storbench.FieldNoiseSize:      "--noise-size",
	storbench.FieldRepeatAuto:     "--repeat auto",
	storbench.FieldPrecision:      "--precision",
	storbench.FieldRepeatMin:      "--repeat-min",
	storbench.FieldRepeatMax:      "--repeat-max",
	storbench.FieldUntilStable:    "--until-stable",
	storbench.FieldStableMax:      "--stable-max",
	storbench.FieldStableInterval: "--stable-interval",
	storbench.FieldDefeatCache:    "--defeat-cache",
	storbench.FieldPrecondition:   "--precondition",
	storbench.FieldSSHBecome:      "--ssh-become",
	storbench.FieldSSHAcceptNew:   "--ssh-accept-new-host-keys",
	storbench.FieldSSHInventory:   "--inventory",
	storbench.FieldSSHHosts:       "--hosts",
	storbench.FieldSSHPath:        "--path",
	storbench.FieldKube:           "--nodes, --size and the other Kubernetes",
	storbench.FieldKubeTimeout:    "--timeout",
	storbench.FieldKubeVolumeMode: "--volume-mode",
	storbench.FieldKubeAccessMode: "--access-mode",
	storbench.FieldKubePullPolicy: "--image-pull-policy",
	storbench.FieldKubeSize:       "--size",
	storbench.FieldKubeNodes:      "--nodes",
	storbench.FieldKubeSelector:   "--node-selector",
	storbench.FieldMetric:         "--metric",
	storbench.FieldSince:          "--since",
	storbench.FieldClass:          "--measure",
	storbench.FieldProfile:        "--profile",
	storbench.FieldNodeStop:       "--node-stop-command",
	storbench.FieldNodeInventory:  "--inventory",
	storbench.FieldNodeHost:       "--node-host",
	storbench.FieldNodeName:       "--node NODE",
	storbench.FieldPullPolicy:     "--image-pull-policy",
	storbench.FieldFor:            "--for",
	storbench.FieldRunIDs:         "RUN-ID arguments",
	storbench.FieldDeviceSize:     "--device-size",
	storbench.FieldFormat:         "--format",
	storbench.FieldStatus:         "--status",
	storbench.FieldMaxSize:        "--max-size",
	storbench.FieldSweepClients:   "--clients",
	storbench.FieldSweepMaxSize:   "--max-size",

	storbench.FieldNodeChoiceNames:    "--nodes",
	storbench.FieldNodeChoiceSelector: "--node-selector",
	storbench.FieldPodOverrides:       "--pod-overrides",
	storbench.FieldSnapshotClass:      "--snapshot-class",
	storbench.FieldNodeFailureHost:    "--node-host",
	storbench.FieldCephFailureOSD:     "--ceph-osd",
	storbench.FieldCephFailureStart:   "--ceph-osd-start-command",
	storbench.FieldCephFailureConf:    "--ceph-conf",
	storbench.FieldCephFailureToolbox: "--ceph-toolbox",
	storbench.FieldCephFailureEnabled: "--ceph-osd-failure",
	storbench.FieldCephFailureStop:    "--ceph-osd-stop-command",
	storbench.FieldCleanupCeph:        "--ceph",
	storbench.FieldCleanupCephConf:    "--ceph-conf",
	storbench.FieldCleanupCephToolbox: "--ceph-toolbox",
}

// flagName is a field's flag, or the field itself where no flag sets it.
func flagName(f storbench.Field) string {
	if flag, ok := flagOf[f]; ok {
		return flag
	}
	return string(f)
}

// inFlags shows a library error in the command line's words: the request
// fields its message names become the flags that set them. The error
// still unwraps to the library's.
func inFlags(err error) error {
	var fe *storbench.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return &flagError{msg: replaceOnce(err.Error(), fe.Error(), fe.Render(flagName)), err: err}
}

type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// replaceOnce replaces the last occurrence of old in s (the innermost
// message sits at the end of a wrapped error's text).
func replaceOnce(s, old, new string) string {
	for i := len(s) - len(old); i >= 0; i-- {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}
