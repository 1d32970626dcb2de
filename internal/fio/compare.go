package fio

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// placement are the options that say where files go, which storbench may
// change (its own work directory) without changing what runs.
var placement = map[string]bool{"filename": true, "directory": true}

// Differences lists how two fio outputs of one job file differ in what ran:
// the job reports (names, groups, order), their effective options ([global]
// and the job's own, apart from file placement) and the directions that did
// I/O. Figures are not compared: two runs never measure the same.
func Differences(a, b *Output) []string {
	var d []string
	ja, jb := a.AllJobs(), b.AllJobs()
	if len(ja) != len(jb) {
		return []string{fmt.Sprintf("%d job reports against %d", len(ja), len(jb))}
	}
	for i := range ja {
		x, y := ja[i], jb[i]
		if x.Name != y.Name || x.GroupID != y.GroupID {
			d = append(d, fmt.Sprintf("report %d: %s (group %d) against %s (group %d)", i, x.Name, x.GroupID, y.Name, y.GroupID))
			continue
		}
		ox, oy := effective(a.GlobalOptions, x.Options), effective(b.GlobalOptions, y.Options)
		for _, k := range unionKeys(ox, oy) {
			if ox[k] != oy[k] {
				d = append(d, fmt.Sprintf("%s: %s=%q against %q", x.Name, k, ox[k], oy[k]))
			}
		}
		if dx, dy := directions(x), directions(y); dx != dy {
			d = append(d, fmt.Sprintf("%s: I/O in %s against %s", x.Name, dx, dy))
		}
	}
	return d
}

func effective(global, job map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range global {
		if !placement[k] {
			m[k] = v
		}
	}
	for k, v := range job {
		if !placement[k] {
			m[k] = v
		}
	}
	return m
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// directions names the directions of a job report that moved data.
func directions(j JobResult) string {
	var out []string
	for _, d := range []struct {
		name string
		dir  *Direction
	}{{"read", j.Read}, {"write", j.Write}, {"trim", j.Trim}} {
		if d.dir != nil && value(d.dir.IOBytes) > 0 {
			out = append(out, d.name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "+")
}

// Shorten returns a job file's text with every job section capped at a
// runtime and a size (appended last in the section, so they win), for
// running a corpus quickly; the same shortened text is what both fio and
// storbench run.
func Shorten(text []byte, runtime string, size string) []byte {
	caps := "runtime=" + runtime + "\nsize=" + size + "\nramp_time=0\nstartdelay=0\n"
	var b strings.Builder
	job := false
	for _, line := range strings.SplitAfter(string(text), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			if job {
				b.WriteString(caps)
			}
			job = !strings.HasPrefix(trimmed, "[global")
		}
		b.WriteString(line)
		if !strings.HasSuffix(line, "\n") && line != "" {
			b.WriteString("\n")
		}
	}
	if job {
		b.WriteString(caps)
	}
	return []byte(b.String())
}

// RunBare runs fio on a job file on this host as a user would (the
// reference storbench is compared with), in dir, and returns its JSON.
// fio forks its jobs into sessions of their own, so when ctx ends RunBare
// kills fio and then every fio process still working in dir: a job that
// never stops (fio 3.33 with io_submit_mode=offload, a multicast job
// waiting for peers) leaves nothing running. dir must be the caller's own.
func RunBare(ctx context.Context, dir, path string) (*Output, error) {
	cmd := exec.CommandContext(ctx, "fio", "--output-format=json", path)
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	raw, err := cmd.Output()
	if ctx.Err() != nil {
		killFioIn(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("fio %s: %w", path, err)
	}
	// Read as storbench reads it: some engines print text before the
	// JSON (cpuio says each job's load).
	docs, _, _, err := ParseOutputs(bytes.NewReader(raw))
	if err == nil && len(docs) != 1 {
		err = fmt.Errorf("%d JSON documents in its output", len(docs))
	}
	if err != nil {
		return nil, fmt.Errorf("fio %s: %w", path, err)
	}
	return &docs[0], nil
}

// killFioIn kills the fio processes whose working directory is dir.
func killFioIn(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		comm, err := os.ReadFile(p + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "fio" {
			continue
		}
		if cwd, err := os.Readlink(p + "/cwd"); err == nil && cwd == abs {
			if pid, err := strconv.Atoi(filepath.Base(p)); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}
