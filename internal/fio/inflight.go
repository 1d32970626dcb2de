package fio

import "strconv"

// syncEngines submit one I/O at a time per job whatever the iodepth (fio's
// HOWTO: "iodepth ... Note that increasing iodepth beyond 1 will not affect
// synchronous ioengines").
var syncEngines = map[string]bool{
	"sync": true, "psync": true, "vsync": true, "pvsync": true, "pvsync2": true,
	"mmap": true, "gfapi": true, "filecreate": true, "filestat": true, "filedelete": true,
	"dircreate": true, "dirstat": true, "dirdelete": true, "net": true, "netsplice": true,
	"splice": true, "e4defrag": true, "falloc": true, "ftruncate": true,
}

// InFlight is how many I/Os a job keeps in flight as fio reports its
// options (the job's own over the [global] ones): iodepth times numjobs,
// with iodepth 1 for a synchronous engine and fio's defaults (iodepth 1,
// numjobs 1, ioengine psync) where an option is absent. It returns 0 when
// an option fio reports is not a number.
func InFlight(global, job Options) int {
	get := func(k string) string {
		if v, ok := job[k]; ok {
			return v
		}
		return global[k]
	}
	n := func(k string) int {
		v := get(k)
		if v == "" {
			return 1
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 1 {
			return 0
		}
		return i
	}
	depth, jobs := n("iodepth"), n("numjobs")
	if engine := get("ioengine"); engine == "" || syncEngines[engine] {
		depth = min(depth, 1)
	}
	return depth * jobs
}
