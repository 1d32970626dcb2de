// Package version holds storbench's version, set at build time with
// -ldflags "-X github.com/storbench/storbench/internal/version.Version=v1.2.3".
package version

import "runtime/debug"

// Version is storbench's version.
var Version = fromBuildInfo()

func fromBuildInfo() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}
