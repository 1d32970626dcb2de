package kubetest

import "testing"

// A test that asks for the cluster must be named TestCluster...: any other
// name fails, whatever the tier; a well-named one skips outside
// k8s-integration.sh.
func TestNamedForTheClusterTier(t *testing.T) {
	t.Setenv("STORBENCH_K8S_INTEGRATION", "")
	for _, tc := range []struct{ name, want string }{
		{"TestClusterShapedLink", "skip"},
		{"TestClusterShapedLink/a_subtest", "skip"},
		{"TestShapedLink", "fail"},
		{"TestQualify/TestClusterX", "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t, name: tc.name}
			got := "run"
			func() {
				defer func() {
					if v := recover(); v != nil && v != r {
						panic(v)
					}
				}()
				ClusterTier(r, "KUBECONFIG")
			}()
			switch {
			case r.failed:
				got = "fail"
			case r.skipped:
				got = "skip"
			}
			if got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}

type recorder struct {
	testing.TB
	name            string
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Name() string          { return r.name }
func (r *recorder) Skip(...any)           { r.skipped = true; panic(r) }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; panic(r) }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
