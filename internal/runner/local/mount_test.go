package local

import "golang.org/x/sys/unix"

func mountTmpfs(dir string) error { return unix.Mount("tmpfs", dir, "tmpfs", 0, "size=16m") }
func unmount(dir string) error    { return unix.Unmount(dir, 0) }
