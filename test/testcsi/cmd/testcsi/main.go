// Command testcsi runs storbench's test-only CSI driver (test/testcsi):
// the controller, or the node plugin of one node. test/cluster/csi.sh
// starts it; see docs/testcsi.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/storbench/storbench/test/testcsi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testcsi:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg testcsi.Config
	var role, mode, endpoint, registry string
	flag.StringVar(&role, "role", "", "controller or node")
	flag.StringVar(&endpoint, "endpoint", "", "path of the CSI unix socket to serve")
	flag.StringVar(&registry, "registration-socket", "", "node: the socket to serve in the kubelet's plugins_registry directory")
	flag.StringVar(&cfg.Name, "driver-name", testcsi.DefaultName, "driver name")
	flag.StringVar(&cfg.Version, "driver-version", "0.1.0", "driver version reported to sidecars and the kubelet")
	flag.StringVar(&cfg.NodeID, "node-id", "", "node: the Kubernetes node this plugin serves")
	flag.StringVar(&cfg.StateDir, "state-dir", "", "directory of volume images and records, shared by every process of the driver")
	flag.Int64Var(&cfg.CapacityBytes, "capacity-bytes", 0, "controller: total bytes of all volumes (0: 64 GiB)")
	flag.Int64Var(&cfg.MaxVolumesPerNode, "max-volumes", 0, "node: volumes this node may hold (0: 8)")
	flag.StringVar(&mode, "default-mode", string(testcsi.ModeShared), "mode of volumes whose StorageClass names none")
	flag.Parse()
	cfg.Role, cfg.DefaultMode = testcsi.Role(role), testcsi.Mode(mode)
	if endpoint == "" {
		return errors.New("--endpoint is required")
	}
	d, err := testcsi.New(cfg)
	if err != nil {
		return err
	}
	cfg = d.Config()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	sockets := []string{endpoint}
	csiListener, err := listen(endpoint)
	if err != nil {
		return err
	}
	go func() { cancel(d.Serve(ctx, csiListener)) }()
	if registry != "" {
		reg := registry
		regListener, err := listen(reg)
		if err != nil {
			return err
		}
		sockets = append(sockets, reg)
		go func() { cancel(d.ServeRegistration(ctx, regListener, endpoint)) }()
	}
	fmt.Fprintf(os.Stderr, "testcsi %s %s serving %v\n", cfg.Name, cfg.Role, sockets)
	err = watchSockets(ctx, sockets)
	for _, s := range sockets {
		os.Remove(s)
	}
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	return err
}

func listen(path string) (net.Listener, error) {
	if len(path) > 107 {
		return nil, fmt.Errorf("socket path %s is %d bytes, more than a unix socket's 107", path, len(path))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return net.Listen("unix", path)
}

// watchSockets returns when ctx is done, or with an error when one of the
// sockets is removed (its node's kubelet root wiped): the process then
// exits, as the sidecars do when the driver's socket goes.
func watchSockets(ctx context.Context, sockets []string) error {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			for _, s := range sockets {
				if _, err := os.Stat(s); err != nil {
					return fmt.Errorf("socket %s went away: %w", s, err)
				}
			}
		}
	}
}
