// Package storbench is the library under every face of storbench: the
// command line, the bench programs, and the faces to come (an SSH fleet, a
// web dashboard and /metrics, periodic runs in a cluster). It has one entry
// point per job: run a plan, import files, compare, qualify, report, list
// classes, check health, doctor, clean up. Each takes its inputs as values
// (a store.Reader or store.Store, a request struct) and returns plain data
// or view models that internal/render turns into tables and documents. It
// never prints, never exits and knows nothing of cobra or flags.
//
// The shape follows crane's pkg/crane under its CLI: a command is its
// flags, one call into this package, and a render.
package storbench
