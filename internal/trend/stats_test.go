package trend

import (
	"math/rand/v2"
	"testing"
)

func TestRunningMedians(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 101)
	for i := range x {
		x[i] = float64(rng.IntN(20)) // ties included
	}
	m := runningMedians(x)
	for i := range x {
		if want := median(x[:i+1]); m[i] != want {
			t.Fatalf("median of the first %d = %v, want %v", i+1, m[i], want)
		}
	}
}
