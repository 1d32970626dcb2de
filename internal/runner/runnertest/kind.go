package runnertest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// KindSuite is one target kind's entry into the kind conformance suite:
// where a new kind starts.
type KindSuite struct {
	Kind runner.Kind
	// Valid are target strings of this kind; each must parse, describe
	// itself and make a target.
	Valid []string
	// Malformed are strings of this kind that Parse must refuse.
	Malformed []Malformed
	// Foreign are other kinds' strings, which Parse must leave alone; a
	// kind that takes any string (local paths) has none.
	Foreign []string
	// Options are the request settings the targets are made with.
	Options runner.Options
	// Targets, when set, runs the Target conformance suite on this kind's
	// targets (Safe made from a Valid string).
	Targets *TargetSuite
	// Open, for a grouped kind (runner.KindGroup), says the Valid specs
	// can be reached here (an sshd on 127.0.0.1, a test cluster): Open
	// must then make at least one named target per spec, in order, and
	// Close end the session. Without it only Spec.Target's refusal
	// (runner.ErrGrouped) is checked.
	Open bool
	// Killed, for a kind with leftovers (runner.KindLeftovers), returns a
	// spec and a target prepared as a run whose storbench was killed
	// leaves it, never cleaned up: FindLeftovers under the spec must find
	// what that run left and RemoveLeftover must remove all of it.
	Killed func(t *testing.T) (runner.Spec, Subject, runner.Need)
}

// Malformed is a string of a kind that Parse refuses, and what the
// refusal must say.
type Malformed struct {
	Target string
	Want   string
}

// KindConformance runs the runner.Kind contract: Parse recognises its own
// strings and only those, refuses malformed ones in the library's words
// (request fields, not command-line flags), a spec describes itself and
// makes a target of its own name, a registry finds the kind, doctor checks
// are well formed, and leftovers are found and removed. Targets then go
// through TargetConformance.
func KindConformance(t *testing.T, s KindSuite) {
	name := s.Kind.Name()
	if name == "" || strings.ContainsAny(name, " :/") {
		t.Errorf("kind name %q: want a plain word", name)
	}
	t.Run("parse", func(t *testing.T) { checkParse(t, s) })
	t.Run("registry", func(t *testing.T) {
		reg := runner.NewRegistry(s.Kind)
		for _, v := range s.Valid {
			k, _, ok, err := reg.Parse(v)
			if !ok || err != nil || k.Name() != name {
				t.Errorf("registry.Parse(%q) = %v, %v, %v", v, k, ok, err)
			}
		}
		defer func() {
			if recover() == nil {
				t.Error("registering the kind twice did not panic")
			}
		}()
		reg.Register(s.Kind)
	})
	if d, ok := s.Kind.(runner.KindDoctor); ok {
		t.Run("doctor", func(t *testing.T) { checkDoctor(t, s, d) })
	}
	if l, ok := s.Kind.(runner.KindLeftovers); ok {
		t.Run("leftovers", func(t *testing.T) {
			if s.Killed == nil {
				t.Fatal("the kind finds leftovers but the suite gives no Killed run to find")
			}
			checkLeftovers(t, s, l)
		})
	}
	if g, ok := s.Kind.(runner.KindGroup); ok && s.Open {
		t.Run("group", func(t *testing.T) { checkGroup(t, s, g) })
	}
	if s.Targets != nil {
		t.Run("target", func(t *testing.T) { TargetConformance(t, *s.Targets) })
	}
}

func checkParse(t *testing.T, s KindSuite) {
	if len(s.Valid) == 0 {
		t.Fatal("the suite names no valid target")
	}
	for _, v := range s.Valid {
		spec, ok, err := s.Kind.Parse(v)
		if !ok || err != nil {
			t.Errorf("Parse(%q) = ok %v, %v", v, ok, err)
			continue
		}
		if spec.String() != v {
			t.Errorf("Parse(%q).String() = %q", v, spec.String())
		}
		if spec.Describe() == "" {
			t.Errorf("Parse(%q) describes nothing for a dry run", v)
		}
		tg, err := spec.Target(s.Options)
		if _, grouped := s.Kind.(runner.KindGroup); grouped {
			if !errors.Is(err, runner.ErrGrouped) {
				t.Errorf("Parse(%q).Target of a grouped kind = %v, %v: want runner.ErrGrouped (Open makes its targets)", v, tg, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q).Target: %v", v, err)
		} else if tg.Name() == "" {
			t.Errorf("the target of %q has no name", v)
		}
	}
	for _, m := range s.Malformed {
		_, ok, err := s.Kind.Parse(m.Target)
		switch {
		case !ok || err == nil:
			t.Errorf("Parse(%q) = ok %v, %v: want a refusal", m.Target, ok, err)
		case !strings.Contains(err.Error(), m.Want):
			t.Errorf("Parse(%q): %v does not say %q", m.Target, err, m.Want)
		case strings.Contains(err.Error(), "--"):
			t.Errorf("Parse(%q): %v names a command-line flag: the library names request fields", m.Target, err)
		}
	}
	for _, f := range s.Foreign {
		if _, ok, err := s.Kind.Parse(f); ok || err != nil {
			t.Errorf("Parse(%q) claims another kind's target: ok %v, %v", f, ok, err)
		}
	}
}

// validSpecs are the suite's Valid strings, parsed.
func validSpecs(t *testing.T, s KindSuite) []runner.Spec {
	var specs []runner.Spec
	for _, v := range s.Valid {
		spec, _, err := s.Kind.Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	return specs
}

func checkGroup(t *testing.T, s KindSuite, g runner.KindGroup) {
	specs := validSpecs(t, s)
	opened, err := g.Open(context.Background(), specs, runner.GroupOptions{Options: s.Options, ReadMemory: true})
	if err != nil {
		t.Fatalf("Open %v: %v", s.Valid, err)
	}
	if len(opened.Targets) < len(specs) {
		t.Errorf("Open made %d targets of %d specs", len(opened.Targets), len(specs))
	}
	for _, tg := range opened.Targets {
		if tg.Name() == "" {
			t.Error("a target of the group has no name")
		}
	}
	for _, m := range opened.Memory {
		if m.Err == nil && (m.Bytes <= 0 || m.Whose == "") {
			t.Errorf("memory %+v: want whose and a size, or why not", m)
		}
	}
	if opened.Close != nil {
		if err := opened.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func checkDoctor(t *testing.T, s KindSuite, d runner.KindDoctor) {
	specs := validSpecs(t, s)
	checks := d.Doctor(context.Background(), specs, s.Options)
	if len(checks) == 0 {
		t.Fatal("Doctor reports no check")
	}
	for _, c := range checks {
		switch {
		case c.Name == "":
			t.Errorf("a check without a name: %+v", c)
		case c.Status != result.CheckOK && c.Status != result.CheckWarn && c.Status != result.CheckFail && c.Status != result.CheckInfo:
			t.Errorf("check %s: status %q", c.Name, c.Status)
		case c.Status == result.CheckFail && c.Fix == "":
			t.Errorf("check %s fails without a fix", c.Name)
		}
	}
}

func checkLeftovers(t *testing.T, s KindSuite, l runner.KindLeftovers) {
	ctx := context.Background()
	spec, sub, need := s.Killed(t)
	if len(sub.Leftovers()) == 0 {
		t.Fatal("the killed run left nothing to find")
	}
	found, err := l.FindLeftovers(ctx, spec, need.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatalf("FindLeftovers found nothing of run %s; left: %v", need.RunID, sub.Leftovers())
	}
	for _, f := range found {
		if f.Kind != s.Kind.Name() || f.RunID != need.RunID || f.Name == "" || f.Where != spec.String() {
			t.Errorf("leftover %+v: want kind %s, run %s, a name, found under %s", f, s.Kind.Name(), need.RunID, spec)
		}
	}
	if other, err := l.FindLeftovers(ctx, spec, need.RunID+"-other"); err != nil || len(other) > 0 {
		t.Errorf("FindLeftovers for another run: %v, %v", other, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, f := range found {
		// Removal finishes after the caller's context is cancelled.
		if err := l.RemoveLeftover(context.WithoutCancel(cctx), f); err != nil {
			t.Errorf("RemoveLeftover %s: %v", f.Name, err)
		}
	}
	if left := sub.Leftovers(); len(left) > 0 {
		t.Errorf("left after removing: %v", left)
	}
	if again, err := l.FindLeftovers(ctx, spec, ""); err != nil || len(again) > 0 {
		t.Errorf("FindLeftovers after removing: %v, %v", again, err)
	}
}
