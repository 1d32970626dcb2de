package release

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// KrewManifest is krew's plugin manifest for the archives: one platform
// per archive, each with its download address and checksum, installing
// kubectl-storbench. baseURL is where the archives are downloaded from
// (https://github.com/storbench/storbench/releases/download/VERSION).
func KrewManifest(src Source, archives []Archive, baseURL string) ([]byte, error) {
	type selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	type file struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	type platform struct {
		Selector selector `json:"selector"`
		URI      string   `json:"uri"`
		SHA256   string   `json:"sha256"`
		Files    []file   `json:"files"`
		Bin      string   `json:"bin"`
	}
	var ps []platform
	for _, a := range archives {
		ps = append(ps, platform{
			Selector: selector{MatchLabels: map[string]string{"os": a.Platform.OS, "arch": a.Platform.Arch}},
			URI:      strings.TrimSuffix(baseURL, "/") + "/" + ArchiveName(src.Version, a.Platform),
			SHA256:   a.SHA256,
			Files:    []file{{"kubectl-storbench", "."}, {"README.md", "."}},
			Bin:      "kubectl-storbench",
		})
	}
	m := map[string]any{
		"apiVersion": "krew.googlecontainertools.github.com/v1alpha2",
		"kind":       "Plugin",
		"metadata":   map[string]any{"name": "storbench"},
		"spec": map[string]any{
			"version":          src.Version,
			"homepage":         "https://github.com/storbench/storbench",
			"shortDescription": "Benchmark and qualify storage classes and nodes",
			"description": "storbench runs a standard set of fio workloads on StorageClasses (a PVC and a\n" +
				"pod per class and node), keeps every result in a local SQLite database and\n" +
				"compares, qualifies and reports them. Examples:\n" +
				"  kubectl storbench classes\n" +
				"  kubectl storbench run --target k8s:longhorn --nodes all\n" +
				"  kubectl storbench doctor --k8s\n",
			"caveats":   "fio runs in the pods storbench creates; they use the storbench-fio image of this\nrelease (see --image).\n",
			"platforms": ps,
		},
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("krew manifest: %w", err)
	}
	return out, nil
}
