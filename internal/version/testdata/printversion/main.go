// Command printversion prints what package version holds, for its tests.
package main

import (
	"fmt"

	"github.com/storbench/storbench/internal/version"
)

func main() {
	i := version.Get()
	fmt.Print(i.Version, " ", i.Commit, " ", i.CommitDate)
}
