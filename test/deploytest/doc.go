// Package deploytest checks what deploy/ ships: the kustomize base and its
// overlay as kubectl renders them (objects, RBAC against what the
// Kubernetes runner needs, every storbench argument against the real
// command tree), the systemd units with systemd-analyze, the Grafana
// dashboard against the metrics storbench emits, and, on the loopback
// cluster, the base applied server-side and applied for real, its CronJob's
// Job and dashboard running from the images the release tooling builds
// (tools/, imported into the real node's containerd).
// It holds tests only.
package deploytest
