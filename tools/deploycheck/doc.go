// Package deploycheck checks the Helm chart (deploy/chart/storbench)
// against the kustomize base it mirrors (deploy/base): helm lint, and both
// rendered (Helm's engine, kustomize's krusty) to the same objects apart
// from names and labels, with the registry set in one place. It holds
// tests only; Helm and kustomize live in this tools module, outside the
// product's dependencies.
package deploycheck
