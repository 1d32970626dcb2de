// Package workflowcheck holds the tests of the repository's GitHub
// workflows (.github/workflows): every one passes actionlint (as a Go
// library: syntax, expressions and their types, the inputs of known
// actions, runner labels), every run: script parses as bash, and the
// release workflow does what docs/install.md says a release is.
package workflowcheck
