package fio

import "syscall"

// errnoText names the errno fio reports in a job's "error" field.
func errnoText(code int) string {
	if code <= 0 {
		return "unknown error"
	}
	return syscall.Errno(code).Error()
}
