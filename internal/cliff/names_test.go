package cliff

import "fmt"

const logName = "throttled-%d-%d-at-%d.log"

func fmtName(before, after, at int64) string { return fmt.Sprintf(logName, before, after, at) }

func fmtSscanf(name string, before, after, at *int64) (int, error) {
	return fmt.Sscanf(name, logName, before, after, at)
}
