package storbench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/storbench/storbench/internal/appfit"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// sshAppClient reaches an ssh:// target for --for sqlite: the probe's
// clients are storbench's own binary, copied to a directory of its own on
// the host (once its architecture is checked against this binary's), and
// removed by the returned cleanup. nil, nil, nil when t is not ssh://.
func sshAppClient(ctx context.Context, t, bin string) (*appfit.Client, func(), error) {
	spec, ok, err := ssh.Kind{}.Parse(t)
	if !ok {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, badRequest("Targets: %s: %v", t, err)
	}
	hs := spec.(ssh.HostSpec)
	c, err := ssh.Dial(ctx, hs.Options)
	if err != nil {
		return nil, nil, refuse(fmt.Errorf("Targets: %s: %w", t, err))
	}
	fail := func(err error) (*appfit.Client, func(), error) { c.Close(); return nil, nil, err }
	out, err := execx.Output(c.Command(ctx, "sh", "-c", `uname -m; if test -d "$1"; then echo dir; else echo none; fi`, "sh", hs.Path))
	if err != nil {
		return fail(fmt.Errorf("%s: reading the host's architecture: %w", t, err))
	}
	lines := strings.Fields(string(out))
	if len(lines) < 2 || lines[1] != "dir" {
		return fail(badRequest("Targets: %s: the sqlite verdict needs an existing directory on the host", t))
	}
	if arch := goArch(lines[0]); arch != runtime.GOARCH {
		return fail(badRequest("Targets: %s: the host is %s (%s) and this storbench is linux/%s: the probe runs storbench's own binary there; "+
			"run qualify on the host itself with its own storbench build", t, lines[0], arch, runtime.GOARCH))
	}
	f, err := os.Open(bin)
	if err != nil {
		return fail(fmt.Errorf("opening storbench's own binary for the probe: %w", err))
	}
	defer f.Close()
	out, err = execx.Output(c.Command(ctx, "mktemp", "-d", "/tmp/storbench-appfit.XXXXXX"))
	if err != nil {
		return fail(fmt.Errorf("%s: making a directory for the probe's binary: %w", t, err))
	}
	dir := strings.TrimSpace(string(out))
	remove := func() {
		_ = c.Command(context.WithoutCancel(ctx), "rm", "-rf", dir).Run()
		c.Close()
	}
	remote := dir + "/storbench"
	if err := c.Command(ctx, "sh", "-c", `cat > "$1" && chmod 0755 "$1"`, "sh", remote).SetStdin(f).Run(); err != nil {
		remove()
		return nil, nil, fmt.Errorf("%s: copying storbench's binary to %s: %w", t, remote, err)
	}
	return &appfit.Client{Cmder: c, Binary: remote, Where: "host " + hs.Options.Host, Dir: hs.Path}, remove, nil
}

// goArch is Go's name for a `uname -m`.
func goArch(m string) string {
	switch m {
	case "x86_64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "armv7l", "armv6l":
		return "arm"
	}
	return m
}
