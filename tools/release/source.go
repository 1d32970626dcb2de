// Package release builds storbench's release artefacts from a source
// tree: the static binaries, the archives storbench-VERSION-linux-ARCH.tar.gz
// with their SHA256SUMS, and the krew manifest. Everything is a function of
// the commit: file times are the commit's date, archive entries are sorted
// with fixed owners, gzip carries no name or time, and the Go builds use
// -trimpath with the version information passed as linker flags, so the
// same commit gives the same checksums on any machine with the same Go.
package release

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Source is the tree a release is built from.
type Source struct {
	// Dir is the repository's top folder (holding go.mod).
	Dir string
	// Version is the release's version: the tag on the commit (v1.2.3)
	// or a Go-style pseudo-version (v0.0.0-20261124120000-0123456789ab),
	// with "-dirty" when the tree has uncommitted changes.
	Version string
	// Commit is the full hash; CommitDate the commit's date (UTC).
	Commit     string
	CommitDate time.Time
	// Dirty says the working tree differs from the commit: the artefacts
	// then hold the tree as it is, not the commit.
	Dirty bool
}

// ReadSource reads dir's commit with git. version, when not "", overrides
// the version git gives.
func ReadSource(dir, version string) (Source, error) {
	s := Source{Dir: dir}
	out, err := git(dir, "log", "-1", "--format=%H %ct")
	if err != nil {
		return s, err
	}
	hash, secs, ok := strings.Cut(strings.TrimSpace(out), " ")
	if !ok {
		return s, fmt.Errorf("git log in %s: unexpected output %q", dir, out)
	}
	var unix int64
	if _, err := fmt.Sscan(secs, &unix); err != nil {
		return s, fmt.Errorf("git log in %s: commit time %q: %w", dir, secs, err)
	}
	s.Commit, s.CommitDate = hash, time.Unix(unix, 0).UTC()
	status, err := git(dir, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return s, err
	}
	s.Dirty = strings.TrimSpace(status) != ""
	switch {
	case version != "":
		s.Version = version
	default:
		if tag, err := git(dir, "describe", "--tags", "--exact-match", "--match", "v[0-9]*"); err == nil {
			s.Version = strings.TrimSpace(tag)
		} else {
			s.Version = "v0.0.0-" + s.CommitDate.Format("20060102150405") + "-" + s.Commit[:12]
		}
		if s.Dirty {
			s.Version += "-dirty"
		}
	}
	return s, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return string(out), nil
}
