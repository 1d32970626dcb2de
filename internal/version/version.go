// Package version holds storbench's version, commit and commit date. A
// release build sets them with -ldflags (tools/release does):
//
//	-X github.com/storbench/storbench/internal/version.Version=v1.2.3
//	-X github.com/storbench/storbench/internal/version.Commit=<40 hex digits>
//	-X github.com/storbench/storbench/internal/version.CommitDate=2026-11-24T12:00:00Z
//
// Without them, the Go toolchain's build information fills in what it
// recorded (go build with -buildvcs: vcs.revision, vcs.time, vcs.modified),
// and the version is the release this tree is at (the RELEASE file) with
// "-dev": v0.1.0-dev, v0.1.0-dev-0123456789ab, v0.1.0-dev-0123456789ab-dirty.
//
// RELEASE names the release whose images this tree's manifests (deploy/)
// and a source build's default fio image use: a release commit sets it to
// the tag it gets (tools/release refuses a tag that differs), so a binary
// built from any commit names images that exist once that release is out.
package version

import (
	_ "embed"
	"runtime"
	"runtime/debug"
	"strings"
)

//go:embed RELEASE
var release string

// Release is the release this source tree is at: the tag of its images.
var Release = strings.TrimSpace(release)

// Set by the linker (-X); they must stay uninitialised for -X to apply.
var (
	// Version is storbench's version: a release tag (v1.2.3), or "dev".
	Version string
	// Commit is the full commit hash the build came from, "" when unknown.
	Commit string
	// CommitDate is the commit's date in RFC 3339 (UTC), "" when unknown.
	CommitDate string
)

func init() {
	fill(&Version, &Commit, &CommitDate)
}

// fill completes what the linker left empty from the build information.
func fill(v, commit, date *string) {
	bi, ok := debug.ReadBuildInfo()
	modified := false
	if ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if *commit == "" {
					*commit = s.Value
				}
			case "vcs.time":
				if *date == "" {
					*date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if mv := bi.Main.Version; *v == "" && mv != "" && mv != "(devel)" {
			*v = mv // go install github.com/storbench/storbench/cmd/storbench@v1.2.3
		}
	}
	if *v == "" {
		*v = Release + devSuffix
		if len(*commit) >= 12 {
			*v += "-" + (*commit)[:12]
			if modified {
				*v += "-dirty"
			}
		}
	}
}

// devSuffix marks the version of a build from source, not a release.
const devSuffix = "-dev"

// ImageTag is the tag of the images this build uses by default: its own
// version when it is a release (or any version set at build time: a
// release's images carry it), the release the tree is at when it is a
// build from source.
func ImageTag() string { return imageTag(Version) }

func imageTag(v string) string {
	if strings.HasPrefix(v, Release+devSuffix) {
		return Release
	}
	return v
}

// Info is the build described in full.
type Info struct {
	Version    string
	Commit     string // "" when unknown
	CommitDate string // RFC 3339, "" when unknown
	GoVersion  string // the toolchain that built the binary (go1.26.8)
	Platform   string // GOOS/GOARCH, with the ARM version for 32-bit ARM
}

// Get returns this binary's build.
func Get() Info {
	return Info{Version: Version, Commit: Commit, CommitDate: CommitDate,
		GoVersion: runtime.Version(), Platform: platform()}
}

func platform() string {
	p := runtime.GOOS + "/" + runtime.GOARCH
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOARM" {
				p += "/v" + s.Value
			}
		}
	}
	return p
}
