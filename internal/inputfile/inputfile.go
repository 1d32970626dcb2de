// Package inputfile reads the files a user hands storbench to configure
// it (suite files, fio job files and their includes, Ansible inventories
// and their variable files) within one size bound, so that a wrong path
// (a disk image, a log) is refused with the bound named instead of being
// read whole. Imported results have their own bound, --max-size
// (storbench.ImportRequest.MaxSize).
package inputfile

import (
	"fmt"
	"io"
	"os"

	"github.com/storbench/storbench/internal/units"
)

// MaxSize is the largest configuration file storbench reads, in bytes:
// far beyond any suite, job file or inventory written by hand.
const MaxSize = 16 << 20

// Read returns the content of the file at path, or an error naming the
// bound when it holds more than MaxSize bytes (a file that grows while it
// is read included).
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s is larger than %s, the most storbench reads from a suite, job or inventory file", path, units.Bytes(MaxSize))
	}
	return data, nil
}
