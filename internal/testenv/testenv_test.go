package testenv

import "testing"

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		env, prereq string
		want        bool
	}{
		{"", "fio", false},
		{"fio,root", "fio", true},
		{"fio, root", "root", true},
		{"fio,root", "loop", false},
		{"all", "chromium", true},
		{"fiox", "fio", false},
	} {
		t.Setenv(EnvRequire, tc.env)
		if got := Required(tc.prereq); got != tc.want {
			t.Errorf("%s=%q Required(%q) = %v, want %v", EnvRequire, tc.env, tc.prereq, got, tc.want)
		}
	}
}
