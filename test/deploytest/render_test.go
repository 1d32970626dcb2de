package deploytest

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/testenv"
)

// deployDir is the repository's deploy/ folder.
func deployDir(t *testing.T) string {
	t.Helper()
	return testenv.SourcePath(t, "deploy")
}

// rendered is what kubectl kustomize made of a kustomization.
type rendered []*unstructured.Unstructured

// render runs kubectl kustomize on deploy/<dir> and decodes its objects.
func render(t *testing.T, dir string) rendered {
	t.Helper()
	kubectl := testenv.Tool(t, "kubectl", "kubernetes-client")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(deployDir(t), dir)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("kubectl kustomize deploy/%s: %v\n%s", dir, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	var objs rendered
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding deploy/%s: %v", dir, err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs
}

// find returns the object of this kind and name, converted into out.
func (r rendered) find(t *testing.T, kind, name string, out any) {
	t.Helper()
	for _, o := range r {
		if o.GetKind() == kind && o.GetName() == name {
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
				t.Fatalf("%s/%s: %v", kind, name, err)
			}
			return
		}
	}
	t.Fatalf("no %s/%s rendered", kind, name)
}

func (r rendered) cronJob(t *testing.T) *batchv1.CronJob {
	var cj batchv1.CronJob
	r.find(t, "CronJob", "storbench", &cj)
	return &cj
}

func (r rendered) deployment(t *testing.T) *appsv1.Deployment {
	var d appsv1.Deployment
	r.find(t, "Deployment", "storbench-serve", &d)
	return &d
}

func (r rendered) service(t *testing.T) *corev1.Service {
	var s corev1.Service
	r.find(t, "Service", "storbench-serve", &s)
	return &s
}

func (r rendered) rules(t *testing.T, kind, name string) []rbacv1.PolicyRule {
	switch kind {
	case "Role":
		var role rbacv1.Role
		r.find(t, kind, name, &role)
		return role.Rules
	default:
		var role rbacv1.ClusterRole
		r.find(t, kind, name, &role)
		return role.Rules
	}
}

// checkArgs parses args (a storbench command line without the program) as
// the real command tree would: the subcommand must exist and every flag
// must be one of its flags, with a valid value. A subcommand that is not
// in this build is reported through testenv (prereq "command-NAME").
func checkArgs(t *testing.T, where string, args []string) *cobra.Command {
	t.Helper()
	root := app.NewRootCommand(cli.Deps{Streams: cli.Streams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard},
		Globals: &cli.Globals{}, Getenv: func(string) string { return "" }})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		if len(args) > 0 {
			testenv.Missing(t, "command-"+args[0], "%s: storbench has no command %q in this build", where, args[0])
		}
		t.Fatalf("%s: %v: no storbench command", where, args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: storbench %v: %v", where, args, err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("%s: storbench %v: %v", where, args, err)
	}
	return cmd
}
