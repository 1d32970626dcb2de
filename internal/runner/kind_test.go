package runner_test

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/runner"
)

// prefixKind recognises "PREFIX:REST"; an empty REST is malformed.
type prefixKind struct{ prefix string }

func (k prefixKind) Name() string { return k.prefix }

func (k prefixKind) Parse(target string) (runner.Spec, bool, error) {
	rest, ok := strings.CutPrefix(target, k.prefix+":")
	if !ok {
		return nil, false, nil
	}
	if rest == "" {
		return nil, true, &malformed{target}
	}
	return nil, true, nil
}

type malformed struct{ target string }

func (m *malformed) Error() string { return "targets: " + m.target + ": names nothing" }

func TestRegistryOrder(t *testing.T) {
	reg := runner.NewRegistry(prefixKind{"rbd"}, prefixKind{"gluster"})
	cases := []struct {
		target string
		kind   string // "" when no kind takes it
		err    string
	}{
		{"rbd:bench/img", "rbd", ""},
		{"gluster:gv0", "gluster", ""},
		{"rbd:", "rbd", "names nothing"},
		{"/dev/sdb", "", ""},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			k, _, ok, err := reg.Parse(c.target)
			if c.kind == "" {
				if ok || err != nil || k != nil {
					t.Fatalf("Parse = %v, %v, %v: want no kind", k, ok, err)
				}
				return
			}
			if !ok || k.Name() != c.kind {
				t.Fatalf("Parse = %v, %v: want kind %s", k, ok, c.kind)
			}
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %v, want %q", err, c.err)
			}
		})
	}
	// With puts a caller's kind first and leaves the registry as it was.
	more := reg.With(prefixKind{"scratch"})
	if got := len(more.Kinds()); got != 3 || more.Kinds()[0].Name() != "scratch" || len(reg.Kinds()) != 2 {
		t.Errorf("With: %d kinds, first %s; the original holds %d", got, more.Kinds()[0].Name(), len(reg.Kinds()))
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second kind named rbd was registered")
		}
	}()
	runner.NewRegistry(prefixKind{"rbd"}, prefixKind{"rbd"})
}
