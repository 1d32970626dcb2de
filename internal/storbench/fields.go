package storbench

import (
	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/field"
	"github.com/storbench/storbench/internal/kubekit"
)

// Field names a request field in the library's errors: they speak of what
// the caller set, in the request's own terms (RunRequest.Measure.RepeatMin
// is "Measure.RepeatMin"), and a caller that sets fields from something
// else (the command line's flags) shows the same error in its own words
// with FieldError.Render. Every Field is listed in Fields.
type Field = field.Name

// The request fields errors name.
const (
	FieldTargets        Field = "Targets"
	FieldRepeat         Field = "Repeat"
	FieldDryRun         Field = "DryRun"
	FieldSuite          Field = "Suite"
	FieldFioJob         Field = "FioJob"
	FieldWorkloads      Field = "Workloads"
	FieldLabels         Field = "Labels"
	FieldDestructive    Field = "Destructive"
	FieldRound          Field = "Round"
	FieldRounds         Field = "Rounds"
	FieldProbe          Field = "Probe"
	FieldNoiseTarget    Field = "NoiseTarget"
	FieldNoiseSize      Field = "NoiseSize"
	FieldRepeatAuto     Field = "Measure.RepeatAuto"
	FieldPrecision      Field = "Measure.Precision"
	FieldRepeatMin      Field = "Measure.RepeatMin"
	FieldRepeatMax      Field = "Measure.RepeatMax"
	FieldUntilStable    Field = "Measure.UntilStable"
	FieldStableMax      Field = "Measure.StableMax"
	FieldStableInterval Field = "Measure.StableInterval"
	FieldDefeatCache    Field = "Measure.DefeatCache"
	FieldPrecondition   Field = "Measure.Precondition"
	FieldSSHBecome      Field = "SSH.Become"
	FieldSSHAcceptNew   Field = "SSH.AcceptNewHostKeys"
	FieldSSHInventory   Field = "SSH.Inventory"
	FieldSSHHosts       Field = "SSH.Hosts"
	FieldSSHPath        Field = "SSH.Path"
	FieldKube           Field = "Kube"
	FieldKubeTimeout    Field = "Kube.Timeout"
	FieldKubeVolumeMode Field = "Kube.VolumeMode"
	FieldKubeAccessMode Field = "Kube.AccessMode"
	FieldKubePullPolicy Field = "Kube.PullPolicy"
	FieldKubeSize       Field = "Kube.Size"
	FieldKubeNodes      Field = "Kube.Nodes"
	FieldKubeSelector   Field = "Kube.NodeSelector"

	// Other requests' fields.
	FieldMetric        Field = "Metric"
	FieldSince         Field = "Since"
	FieldClass         Field = "Class"
	FieldProfile       Field = "Profile"
	FieldNodeStop      Field = "NodeFailure.StopCommand"
	FieldNodeInventory Field = "NodeFailure.Inventory"
	FieldNodeHost      Field = "NodeFailure.Host"
	FieldNodeName      Field = "NodeFailure.Node"
	FieldPullPolicy    Field = "PullPolicy"
	FieldFor           Field = "For"
	FieldRunIDs        Field = "RunIDs"
	FieldDeviceSize    Field = "DeviceSize"
	FieldFormat        Field = "Format"
	FieldStatus        Field = "Status"
	FieldMaxSize       Field = "MaxSize"
	FieldSweepClients  Field = "Sweep.Clients"
	FieldSweepMaxSize  Field = "Sweep.MaxSize"
	// CephFailureRequest's and KubeCleanupRequest's Ceph options.
	FieldCephFailureEnabled Field = "CephFailure.Enabled"
	FieldCephFailureStop    Field = "CephFailure.StopCommand"
	FieldCleanupCeph        Field = "Ceph"
	FieldCleanupCephConf    Field = "CephConf"
	FieldCleanupCephToolbox Field = "CephToolbox"

	// The fields of the requests below the library, which their
	// refusals name.
	FieldNodeChoiceNames    = kubekit.FieldNodeNames
	FieldNodeChoiceSelector = kubekit.FieldNodeSelector
	FieldPodOverrides       = kubekit.FieldPodOverrides
	FieldSnapshotClass      = kubekit.FieldSnapshotClass
	FieldNodeFailureHost    = classcheck.FieldNodeFailureHost
	FieldCephFailureOSD     = classcheck.FieldCephFailureOSD
	FieldCephFailureStart   = classcheck.FieldCephFailureStart
	FieldCephFailureConf    = classcheck.FieldCephFailureConf
	FieldCephFailureToolbox = classcheck.FieldCephFailureToolbox
)

// Fields are every Field errors may name, for callers that map them.
var Fields = []Field{
	FieldTargets, FieldRepeat, FieldDryRun, FieldSuite, FieldFioJob, FieldWorkloads, FieldLabels, FieldDestructive,
	FieldRound, FieldRounds, FieldProbe, FieldNoiseTarget, FieldNoiseSize, FieldRepeatAuto, FieldPrecision, FieldRepeatMin, FieldRepeatMax,
	FieldUntilStable, FieldStableMax, FieldStableInterval, FieldDefeatCache, FieldPrecondition,
	FieldSSHBecome, FieldSSHAcceptNew, FieldSSHInventory, FieldSSHHosts, FieldSSHPath,
	FieldKube, FieldKubeTimeout, FieldKubeVolumeMode, FieldKubeAccessMode, FieldKubePullPolicy, FieldKubeSize,
	FieldKubeNodes, FieldKubeSelector,
	FieldMetric, FieldSince, FieldClass, FieldProfile, FieldNodeStop, FieldNodeInventory, FieldNodeHost, FieldNodeName, FieldPullPolicy,
	FieldFor, FieldRunIDs, FieldDeviceSize, FieldFormat, FieldStatus, FieldMaxSize, FieldSweepClients, FieldSweepMaxSize,
	FieldNodeChoiceNames, FieldNodeChoiceSelector, FieldPodOverrides, FieldSnapshotClass, FieldNodeFailureHost,
	FieldCephFailureOSD, FieldCephFailureStart, FieldCephFailureConf, FieldCephFailureToolbox,
	FieldCephFailureEnabled, FieldCephFailureStop, FieldCleanupCeph, FieldCleanupCephConf, FieldCleanupCephToolbox,
}

// FieldError is an error whose message names request fields (its Field
// arguments): Error names them as the request does, Render as its caller
// does. The packages below the library (runner/kube, classcheck) make
// them too.
type FieldError = field.Error

func fieldErrorf(format string, args ...any) *FieldError { return field.Errorf(format, args...) }
