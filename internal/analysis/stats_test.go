package analysis

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   Stats
		ci     *Interval
	}{
		{
			// Hand-computed: sum 40, squared deviations 32, s^2 = 32/7,
			// t(7) = 2.365, half width = 2.365 * 2.138090 / sqrt(8) = 1.787772.
			name:   "eight values",
			values: []float64{4, 2, 9, 4, 5, 4, 7, 5},
			want: Stats{N: 8, Mean: 5, Median: 4.5, Min: 2, Max: 9, StdDev: 2.138089935, CVPercent: 42.76179871,
				TrimmedMean: 29.0 / 6, Trimmed: true},
			ci: &Interval{Low: 5 - 1.78777196, High: 5 + 1.78777196},
		},
		{
			// Fewer than 4: no trimming; t(2) = 4.303.
			name:   "three values",
			values: []float64{1, 3, 2},
			want:   Stats{N: 3, Mean: 2, Median: 2, Min: 1, Max: 3, StdDev: 1, CVPercent: 50, TrimmedMean: 2},
			ci:     &Interval{Low: 2 - 4.303/math.Sqrt(3), High: 2 + 4.303/math.Sqrt(3)},
		},
		{
			// Exactly 4: drop the best and the worst.
			name:   "four values trimmed",
			values: []float64{10, 20, 20, 100},
			want: Stats{N: 4, Mean: 37.5, Median: 20, Min: 10, Max: 100, StdDev: 41.93248541, CVPercent: 111.8199611,
				TrimmedMean: 20, Trimmed: true},
			ci: &Interval{Low: 37.5 - 3.182*41.93248541/2, High: 37.5 + 3.182*41.93248541/2},
		},
		{
			name:   "one value",
			values: []float64{7},
			want:   Stats{N: 1, Mean: 7, Median: 7, Min: 7, Max: 7, TrimmedMean: 7},
		},
		{name: "empty", values: nil, want: Stats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			got := Summarize(tt.values)
			for i := range in {
				if in[i] != tt.values[i] {
					t.Fatalf("Summarize reordered its input")
				}
			}
			w := tt.want
			if got.N != w.N || got.Trimmed != w.Trimmed {
				t.Fatalf("N/Trimmed = %d/%v, want %d/%v", got.N, got.Trimmed, w.N, w.Trimmed)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"mean", got.Mean, w.Mean}, {"median", got.Median, w.Median}, {"min", got.Min, w.Min}, {"max", got.Max, w.Max},
				{"stddev", got.StdDev, w.StdDev}, {"cv", got.CVPercent, w.CVPercent}, {"trimmed", got.TrimmedMean, w.TrimmedMean},
			} {
				if !near(f.got, f.want) {
					t.Errorf("%s = %.9g, want %.9g", f.name, f.got, f.want)
				}
			}
			switch {
			case tt.ci == nil && got.CI95 != nil:
				t.Errorf("CI95 = %+v, want none", *got.CI95)
			case tt.ci != nil && (got.CI95 == nil || !near(got.CI95.Low, tt.ci.Low) || !near(got.CI95.High, tt.ci.High)):
				t.Errorf("CI95 = %+v, want %+v", got.CI95, *tt.ci)
			}
		})
	}
}

func TestUnstable(t *testing.T) {
	for _, tt := range []struct {
		values []float64
		want   bool
	}{
		{[]float64{100, 100, 100}, false},
		{[]float64{95, 105}, false},  // CV 7.07%
		{[]float64{800, 1100}, true}, // CV 22.3%
		{[]float64{50}, false},       // one value has no spread
	} {
		if got := Summarize(tt.values).Unstable(); got != tt.want {
			t.Errorf("Unstable(%v) = %v, want %v (CV %.2f%%)", tt.values, got, tt.want, Summarize(tt.values).CVPercent)
		}
	}
}

func TestTCritical(t *testing.T) {
	for df, want := range map[int]float64{1: 12.706, 4: 2.776, 30: 2.042, 35: 2.021, 1000: 1.960} {
		if got := tCritical95(df); got != want {
			t.Errorf("t(%d) = %v, want %v", df, got, want)
		}
	}
}

func TestRunsFor(t *testing.T) {
	cases := []struct {
		cv, p float64
		want  int
	}{
		{0, 0.05, 2},
		{0.01, 0.05, 3},     // t(1) 12.706 * 0.01 / 1.414 = 0.0898 > 0.05; n 3: 4.303 * 0.01 / 1.732 = 0.0248
		{0.05, 0.05, 7},     // n 6: 2.571 * 0.05 / 2.449 = 0.0525; n 7: 2.447 * 0.05 / 2.646 = 0.0462
		{0.5, 0.01, 9604},   // (1.96 * 50)^2
		{0.5, 0.001, 10000}, // capped
	}
	for _, c := range cases {
		if got := RunsFor(c.cv, c.p, 10000); got != c.want {
			t.Errorf("RunsFor(%v, %v) = %d, want %d", c.cv, c.p, got, c.want)
		}
	}
}
