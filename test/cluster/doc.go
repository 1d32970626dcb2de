// Package clustertest holds the tests of the project's test cluster itself
// (test/cluster/cluster.sh): the shaped links between real nodes, pod IPs
// across nodes, a node dying and coming back, node-local and network
// volumes. It has no code outside its tests; scripts/k8s-integration.sh
// runs them on the cluster it brings up.
package clustertest
