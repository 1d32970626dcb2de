package result

// StorageClass is what a Kubernetes StorageClass gives, in the terms
// homelab users trade off: dynamic provisioning, failover, and (from stored
// results, see analysis.Class) speed. internal/runner/kube reads it from
// the cluster.
type StorageClass struct {
	Name        string            `json:"name"`
	Provisioner string            `json:"provisioner"`
	Default     bool              `json:"default"`
	Dynamic     bool              `json:"dynamic_provisioning"`
	Failover    string            `json:"failover"` // "yes", "no" or "unknown"
	FailoverWhy string            `json:"failover_reason"`
	BindingMode string            `json:"binding_mode"`
	Reclaim     string            `json:"reclaim_policy"`
	Expansion   bool              `json:"volume_expansion"`
	AccessModes []string          `json:"access_modes"`
	Snapshots   string            `json:"snapshots"` // "yes: CLASS", "no" or "unknown"
	Parameters  map[string]string `json:"parameters,omitempty"`
}

// CheckStatus is the outcome of one doctor check.
type CheckStatus string

// The outcomes of a doctor check.
const (
	CheckOK   CheckStatus = "ok"
	CheckWarn CheckStatus = "warn"
	CheckFail CheckStatus = "fail"
	CheckInfo CheckStatus = "info"
)

// Check is one line of doctor's checklist (of a cluster or a host), with a
// fix for failures.
type Check struct {
	Area   string      `json:"area"`
	Name   string      `json:"name"`
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail,omitempty"`
	Fix    string      `json:"fix,omitempty"`
}
