package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// Each explanation names the target it explains when several ran.
func TestBottlenecksNameTheTarget(t *testing.T) {
	lim := &result.Attribution{LimitedBy: "network", Evidence: "write 119 MB/s is 100% of the link"}
	r := func(target, node, class string) result.Result {
		l := map[string]string{}
		if node != "" {
			l["node"], l["storage_class"] = node, class
		}
		return result.Result{Target: target, Workload: "seq-write", Bottleneck: lim, Labels: l}
	}
	tests := []struct {
		name    string
		results []result.Result
		want    []string
	}{
		{"one target: the workload alone", []result.Result{r("/mnt/a", "", "")}, []string{"  seq-write: limited by network"}},
		{"nodes and classes", []result.Result{r("k8s:netfs@n1", "n1", "netfs"), r("k8s:netfs@n2", "n2", "netfs")},
			[]string{"  seq-write on node n1, class netfs: limited by network", "  seq-write on node n2, class netfs: limited by network"}},
		{"host targets", []result.Result{r("/mnt/a", "", ""), r("ssh://b/x", "", "")},
			[]string{"  seq-write on /mnt/a: limited", "  seq-write on ssh://b/x: limited"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Bottlenecks(&b, tt.results); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
		})
	}
}
