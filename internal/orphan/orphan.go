// Package orphan deals with orphaned runs: runs stored as running whose
// storbench process is gone (killed with SIGKILL, lost with a rebooted
// host). It finds what they left on local directory targets, removes it,
// and records those runs as abandoned. It removes a work
// directory only when its name is exactly that of an abandoned run's and it
// holds nothing but files storbench or its fio jobs make there.
package orphan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/store"
)

// Find lists the abandoned runs (only runID's when it is not empty) and
// the work directories they left. It changes nothing.
func Find(ctx context.Context, st store.Store, rd proc.Reader, runID string) ([]result.OrphanedRun, error) {
	var runs []result.Run
	if runID != "" {
		r, err := st.Run(ctx, runID)
		if err != nil {
			return nil, err
		}
		runs = []result.Run{*r}
	} else {
		var err error
		if runs, err = st.Runs(ctx, store.RunFilter{Status: result.StatusRunning}); err != nil {
			return nil, err
		}
	}
	var out []result.OrphanedRun
	for _, r := range runs {
		if !rd.Abandon(&r) {
			continue
		}
		a := result.OrphanedRun{ID: r.ID, Why: strings.TrimPrefix(r.Note, "abandoned: "), Dirs: []result.OrphanedDir{}}
		for _, t := range r.Targets {
			if place, ok := workPlace(t, r); ok {
				a.Places = append(a.Places, place)
			}
			d, ok := workDir(t, r)
			if ok {
				a.Dirs = append(a.Dirs, d)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// workPlace is where the run's work directory is or was under a directory
// target.
func workPlace(target string, r result.Run) (string, bool) {
	if strings.Contains(target, ":") || strings.HasPrefix(target, "/dev/") {
		return "", false // Kubernetes (cleanup --k8s) or a device: no work directory
	}
	return filepath.Join(target, "storbench-"+r.ID), true
}

// StopWait bounds waiting for a run's leftover processes to go after
// SIGKILL.
const StopWait = 5 * time.Second

// Stop kills the fio processes still working in the runs' work
// directories (there or removed) and waits for them to go, recording them
// in Stopped.
// A run's storbench killed outright can leave fio's job processes behind;
// Clean stops them before it removes anything, and a new run stops those
// of every abandoned run before it starts.
func Stop(rd proc.Reader, runs []result.OrphanedRun) error {
	var errs []error
	for i := range runs {
		for _, place := range runs[i].Places {
			ps, err := rd.StopWorkingIn(place, "fio", StopWait)
			for _, p := range ps {
				runs[i].Stopped = append(runs[i].Stopped, p.PID)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("run %s: stopping what works in %s: %w", runs[i].ID, place, err))
			}
		}
	}
	return errors.Join(errs...)
}

// workDir looks for the run's work directory under a directory target.
func workDir(target string, r result.Run) (result.OrphanedDir, bool) {
	dir, ok := workPlace(target, r)
	if !ok {
		return result.OrphanedDir{}, false
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return result.OrphanedDir{}, false
	}
	d := result.OrphanedDir{Path: dir, Files: []string{}}
	if !fi.IsDir() {
		d.Kept = "not a directory"
		return d, true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		d.Kept = err.Error()
		return d, true
	}
	for _, e := range entries {
		d.Files = append(d.Files, e.Name())
		if why := foreign(e, r); why != "" && d.Kept == "" {
			d.Kept = why
		}
	}
	return d, true
}

// directIOProbe is the file the local runner briefly makes to check that
// the filesystem takes O_DIRECT.
const directIOProbe = ".direct-io-probe"

// fioDefaultName is the file fio makes for a job without filename=:
// JOBNAME.JOBNUMBER.FILENUMBER.
var fioDefaultName = regexp.MustCompile(`^(.+)\.[0-9]+\.[0-9]+$`)

// bandwidthLog is fio's bandwidth log of a measured workload:
// PREFIX_bw.JOBNUMBER.log, with storbench's prefix (fio.BandwidthLogPrefix).
var bandwidthLog = regexp.MustCompile(`^storbench-[A-Za-z0-9._-]*_bw\.[0-9]+\.log$`)

// foreign says why an entry of a work directory is not storbench's, or "".
func foreign(e os.DirEntry, r result.Run) string {
	if !e.Type().IsRegular() {
		return fmt.Sprintf("%s is not a regular file", e.Name())
	}
	switch e.Name() {
	case local.TestFileName, engine.NoiseFileName, directIOProbe:
		return ""
	}
	if engine.IsJobFile(e.Name()) || bandwidthLog.MatchString(e.Name()) {
		return ""
	}
	if m := fioDefaultName.FindStringSubmatch(e.Name()); m != nil {
		for _, w := range r.Workloads {
			if m[1] == w {
				return ""
			}
		}
	}
	return fmt.Sprintf("%s is not a file storbench makes", e.Name())
}

// Clean stops what still works in the runs' work directories (Stop),
// removes the directories that hold only storbench's files, file by file,
// and records every run as abandoned with what was removed. It goes on
// after a failure and returns all of them.
func Clean(ctx context.Context, st store.Store, runs []result.OrphanedRun) error {
	var errs []error
	if err := Stop(proc.Reader{}, runs); err != nil {
		errs = append(errs, err)
	}
	for i := range runs {
		a := &runs[i]
		var removed []string
		for j := range a.Dirs {
			d := &a.Dirs[j]
			if d.Kept != "" {
				continue
			}
			if err := removeDir(d); err != nil {
				d.Kept = err.Error()
				errs = append(errs, err)
				continue
			}
			d.Removed = true
			removed = append(removed, d.Path)
		}
		r, err := st.Run(ctx, a.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.Status = result.StatusAbandoned
		r.Note = "abandoned: " + a.Why
		if len(removed) > 0 {
			r.Note += "; storbench cleanup removed " + strings.Join(removed, ", ")
		}
		if len(a.Stopped) > 0 {
			r.Note += fmt.Sprintf("; storbench cleanup killed %d processes left working there", len(a.Stopped))
		}
		if err := st.UpdateRun(ctx, r); err != nil {
			errs = append(errs, err)
			continue
		}
		a.Marked = true
	}
	return errors.Join(errs...)
}

// removeDir removes the files Find listed, then the directory. It works
// through a descriptor of the directory opened without following links, so
// a directory swapped for a symbolic link since Find cannot redirect it,
// and a file that appeared since makes the final rmdir fail rather than be
// removed.
func removeDir(d *result.OrphanedDir) error {
	fd, err := unix.Open(d.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("removing %s: %w", d.Path, err)
	}
	defer unix.Close(fd)
	for _, f := range d.Files {
		if err := unix.Unlinkat(fd, f, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("removing %s: %w", filepath.Join(d.Path, f), err)
		}
	}
	if err := unix.Rmdir(d.Path); err != nil {
		return fmt.Errorf("removing %s: %w", d.Path, err)
	}
	return nil
}
