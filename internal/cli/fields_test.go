package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/storbench/storbench/internal/storbench"
)

// Every field the library's errors may name has its flag.
func TestEveryFieldHasAFlag(t *testing.T) {
	for _, f := range storbench.Fields {
		if _, ok := flagOf[f]; !ok {
			t.Errorf("field %s has no flag in flagOf", f)
		}
	}
	if len(flagOf) != len(storbench.Fields) {
		t.Errorf("flagOf maps %d fields, the library names %d", len(flagOf), len(storbench.Fields))
	}
}

// A refused request reads in flags on the command line, wrapped or not,
// and still unwraps to the library's error.
func TestFromLibraryNamesFlags(t *testing.T) {
	req := storbench.DefaultRunRequest()
	req.Repeat = 0
	_, err := storbench.Run(t.Context(), nil, req, nil)
	if err == nil || err.Error() == "" {
		t.Fatal("a run with no target ran")
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{err, "no target: give --target DIR or --target /dev/DEVICE"},
		{fmt.Errorf("run: %w", err), "run: no target: give --target DIR or --target /dev/DEVICE"},
	} {
		got := FromLibrary(c.err)
		if got.Error() != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		var re *storbench.RequestError
		var ee *ExitError
		if !errors.As(got, &re) || !errors.As(got, &ee) || ee.Code != ExitUsage {
			t.Errorf("%v: lost the library's error or its exit code", got)
		}
	}
	if want := "no target: give Targets DIR or Targets /dev/DEVICE"; err.Error() != want {
		t.Errorf("the library says %q, want %q", err, want)
	}
}
