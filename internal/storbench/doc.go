// Package storbench is the library under every way of using storbench: the
// command line, the dashboard and /metrics of storbench serve, and the bench
// programs. It has one entry point per job: run a plan (on directories,
// devices, Kubernetes StorageClasses and SSH hosts) or dry-run a fio job,
// import files, compare, qualify, report, show and list runs, list classes,
// check health, doctor, clean up (this host, a cluster, SSH hosts), trend,
// export. Each takes its inputs as values (a store.Reader or store.Store, a
// request struct) and answers in internal/result types and internal/analysis
// views, which internal/render turns into tables and documents. It never
// prints, never exits and knows nothing of cobra or of flag names (errors
// do name the options by their documented flags).
//
// The shape follows crane's pkg/crane under its CLI: a command is its
// flags, one call into this package, and a render.
package storbench
