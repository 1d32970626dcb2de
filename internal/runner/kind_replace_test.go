package runner_test

import (
	"slices"
	"testing"

	"github.com/storbench/storbench/internal/runner"
)

// settingKind is a kind holding a setting, as ssh.Kind holds Become.
type settingKind struct {
	prefixKind
	setting string
}

func names(r *runner.Registry) []string {
	var out []string
	for _, k := range r.Kinds() {
		out = append(out, k.Name())
	}
	return out
}

// Replace gives a kind its settings in its place, leaves the registry it
// was called on as it was, and adds no kind it does not hold.
func TestRegistryReplace(t *testing.T) {
	reg := runner.NewRegistry(settingKind{prefixKind: prefixKind{"ssh"}}, prefixKind{"local"})
	set := reg.Replace(settingKind{prefixKind: prefixKind{"ssh"}, setting: "become"})
	if got := names(set); !slices.Equal(got, []string{"ssh", "local"}) {
		t.Errorf("order after Replace: %v", got)
	}
	if k := set.Kinds()[0].(settingKind); k.setting != "become" {
		t.Errorf("replaced kind holds %q", k.setting)
	}
	if k := reg.Kinds()[0].(settingKind); k.setting != "" {
		t.Errorf("Replace changed the registry it was called on: %q", k.setting)
	}
	if got := names(reg.Replace(prefixKind{"rbd"})); !slices.Equal(got, []string{"ssh", "local"}) {
		t.Errorf("Replace of a kind not held: %v", got)
	}
}
