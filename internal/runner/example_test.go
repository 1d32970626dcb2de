package runner_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// tmpfsKind is a kind of target written for this example: "tmpfs:DIR" is
// a directory on this host, measured as local.Kind measures one. A real
// kind lives in a package of its own (internal/runner/rbd) and adds its
// doctor (runner.KindDoctor) and its leftovers (runner.KindLeftovers).
type tmpfsKind struct{}

func (tmpfsKind) Name() string { return "tmpfs" }

func (tmpfsKind) Parse(target string) (runner.Spec, bool, error) {
	dir, ok := strings.CutPrefix(target, "tmpfs:")
	if !ok {
		return nil, false, nil
	}
	if !strings.HasPrefix(dir, "/") {
		return nil, true, fmt.Errorf("targets: %s: write tmpfs:/ABSOLUTE/DIR", target)
	}
	return tmpfsSpec(dir), true, nil
}

type tmpfsSpec string

func (s tmpfsSpec) String() string   { return "tmpfs:" + string(s) }
func (s tmpfsSpec) Describe() string { return "a tmpfs directory on this host" }
func (s tmpfsSpec) Target(o runner.Options) (runner.Target, error) {
	return local.NewTarget(string(s), local.Options{Destructive: o.Destructive}), nil
}

// A kind registers in one line: storbench.Kinds() lists the library's
// kinds (grouped ones such as ssh.Kind first, local.Kind, which takes any
// path, last), and a caller adds its own with With. The registry then
// finds the kind of each target string; a grouped kind's targets are made
// together by its Open, any other's by Spec.Target.
func ExampleRegistry() {
	reg := runner.NewRegistry(ssh.Kind{}, local.Kind{}).With(tmpfsKind{})
	for _, target := range []string{"tmpfs:/mnt/ram", "tmpfs:ram", "ssh://pi01/srv/bench", "/srv/bench"} {
		k, spec, _, err := reg.Parse(target)
		if err != nil {
			fmt.Printf("%s: refused: %v\n", target, err)
			continue
		}
		_, terr := spec.Target(runner.Options{})
		fmt.Printf("%s: kind %s, grouped %v\n", spec, k.Name(), errors.Is(terr, runner.ErrGrouped))
	}
	// Output:
	// tmpfs:/mnt/ram: kind tmpfs, grouped false
	// tmpfs:ram: refused: targets: tmpfs:ram: write tmpfs:/ABSOLUTE/DIR
	// ssh://pi01/srv/bench: kind ssh, grouped true
	// /srv/bench: kind local, grouped false
}
