package safety_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

// TestHostileDeviceCorpus builds every hostile device on a real loop
// device and checks that the built-in check alone (blkid hidden from PATH)
// and the blkid path each refuse it, even with --destructive naming it, and
// that nothing changed its bytes.
func TestHostileDeviceCorpus(t *testing.T) {
	cases := safetytest.Cases()
	ran, refused := 0, 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ran++
			dev := c.Device(t)
			before := safetytest.Sum(t, dev)
			policy := safety.Policy{Destructive: []string{dev}}
			ctx := context.Background()

			// blkid path.
			err := policy.CheckWrite(ctx, safety.LocalFacts{}, dev, []string{"w"})
			var r *safety.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("with blkid: not refused: %v", err)
			}
			for _, want := range []string{c.Blkid, c.Refusal} {
				if want != "" && !strings.Contains(err.Error(), want) {
					t.Errorf("with blkid: refusal does not say %q: %v", want, err)
				}
			}

			// The built-in check alone.
			if c.Magic != "" {
				found, err := safety.MagicSignatures(dev)
				if err != nil || !strings.Contains(strings.Join(found, "; "), c.Magic) {
					t.Errorf("built-in check found %q (err %v), want %q", found, err, c.Magic)
				}
			}
			t.Setenv("PATH", t.TempDir())
			err = policy.CheckWrite(ctx, safety.LocalFacts{}, dev, []string{"w"})
			if !errors.As(err, &r) {
				t.Fatalf("without blkid: not refused: %v", err)
			}
			want := c.Magic
			if want == "" {
				want = c.Refusal
			}
			if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "(blkid)") {
				t.Errorf("without blkid: refusal does not say %q: %v", want, err)
			}
			if after := safetytest.Sum(t, dev); after != before {
				t.Errorf("device changed: sha256 %s -> %s", before, after)
			}
			if !t.Failed() {
				refused++
			}
		})
	}
	t.Logf("hostile device corpus: %d cases, %d run, %d refused with the device unchanged", len(cases), ran, refused)
}

// TestBlankDeviceIsAllowedOnlyWhenNamed: the corpus's counterpart, a blank
// device passes both paths once named.
func TestBlankDeviceIsAllowedOnlyWhenNamed(t *testing.T) {
	c := safetytest.Case{Name: "blank", Size: 16 << 20, Setup: func(testing.TB, string) {}}
	dev := c.Device(t)
	ctx := context.Background()
	err := safety.Policy{}.CheckWrite(ctx, safety.LocalFacts{}, dev, []string{"w"})
	var r *safety.Refusal
	if !errors.As(err, &r) || r.Rule != safety.RuleNotNamed || !strings.Contains(err.Error(), "pass --destructive "+dev) {
		t.Errorf("unnamed: %v", err)
	}
	if err := (safety.Policy{Destructive: []string{dev}}).CheckWrite(ctx, safety.LocalFacts{}, dev, []string{"w"}); err != nil {
		t.Errorf("named blank device refused: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := (safety.Policy{Destructive: []string{dev}}).CheckWrite(ctx, safety.LocalFacts{}, dev, []string{"w"}); err != nil {
		t.Errorf("named blank device refused without blkid: %v", err)
	}
	if found, err := safety.MagicSignatures(dev); err != nil || len(found) != 0 {
		t.Errorf("built-in check on a blank device: %v %v", found, err)
	}
}

// TestDeviceFilledByFioIsStillBlank: a device an earlier run filled with
// fio's incompressible data carries no signature, so the next run with
// --destructive is allowed (by blkid and by the built-in check).
func TestDeviceFilledByFioIsStillBlank(t *testing.T) {
	fio := testenv.Fio(t)
	c := safetytest.Case{Name: "filled", Size: 32 << 20, Setup: func(t testing.TB, dev string) {
		safetytest.Run(t, fio, "--name=fill", "--filename="+dev, "--rw=write", "--bs=1M", "--direct=1", "--refill_buffers", "--randrepeat=0", "--output-format=terse")
	}}
	dev := c.Device(t)
	policy := safety.Policy{Destructive: []string{dev}}
	if err := policy.CheckWrite(context.Background(), safety.LocalFacts{}, dev, []string{"w"}); err != nil {
		t.Errorf("with blkid: %v", err)
	}
	if found, err := safety.MagicSignatures(dev); err != nil || len(found) != 0 {
		t.Errorf("built-in check: %v %v", found, err)
	}
}
