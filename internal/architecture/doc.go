// Package architecture holds no code: its test checks the rules of
// docs/architecture.md against the module as it is, so the page stays true.
package architecture
