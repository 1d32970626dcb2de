package kubekit

import "github.com/storbench/storbench/internal/field"

// The request fields this package's refusals name (field.Error), which
// the command line shows as its flags.
const (
	FieldNodeNames     field.Name = "NodeChoice.Names"
	FieldNodeSelector  field.Name = "NodeChoice.Selector"
	FieldPodOverrides  field.Name = "TargetOptions.PodOverrides"
	FieldSnapshotClass field.Name = "SnapshotClass"
)
