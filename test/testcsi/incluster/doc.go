// Package incluster holds the integration tests of the test-only CSI
// driver (test/testcsi) on the test cluster, with the real sidecars:
// scripts/k8s-integration.sh runs them after test/cluster/csi.sh up.
// Every StorageClass testcsi-<mode> is exercised; the broken modes must
// show their breakage.
package incluster
