package runcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/safety"
)

// checkJobDevices applies the device safety rules to the block devices a
// user's fio job names in filename= (fio separates several files with ':'):
// a job section that writes to one needs --destructive naming it.
func checkJobDevices(job fio.Job, destructive []string) error {
	writers := map[string][]string{}
	for _, s := range job.Sections {
		names, _ := job.Lookup(s.Name, "filename")
		writes := job.Writes(s.Name)
		for _, n := range strings.Split(names, ":") {
			if !filepath.IsAbs(n) {
				continue
			}
			fi, err := os.Stat(n)
			if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
				continue
			}
			if writes {
				writers[n] = append(writers[n], s.Name)
			}
		}
	}
	for dev, ws := range writers {
		if err := (safety.Policy{Destructive: destructive}).CheckWrite(context.Background(), safety.LocalFacts{}, dev, ws); err != nil {
			return err
		}
	}
	return nil
}
