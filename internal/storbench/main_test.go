package storbench_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

// TestMain leaves ExampleRun, which runs real fio, to the host tier.
func TestMain(m *testing.M) {
	flag.Parse()
	if err := testenv.HostTierExamples("ExampleRun"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
