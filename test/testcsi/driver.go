package testcsi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/storbench/storbench/internal/execx"
)

// Driver is one driver process: a controller or one node's plugin.
type Driver struct {
	cfg   Config
	state state
	disk  disk
	// mu serializes every operation that changes the state directory;
	// within one process that is enough, and only the controller writes
	// volume and snapshot records (a node plugin writes its own staging
	// records only).
	mu sync.Mutex
}

// New checks cfg and prepares its state directory.
func New(cfg Config) (*Driver, error) {
	cfg = cfg.withDefaults()
	switch cfg.Role {
	case RoleController:
	case RoleNode:
		if cfg.NodeID == "" || idFor(cfg.NodeID) != cfg.NodeID {
			return nil, fmt.Errorf("testcsi: node plugin needs a node ID of lower-case letters, digits, '-' and '.' (got %q)", cfg.NodeID)
		}
	default:
		return nil, fmt.Errorf("testcsi: role %q is neither %q nor %q", cfg.Role, RoleController, RoleNode)
	}
	if cfg.StateDir == "" {
		return nil, errors.New("testcsi: no state directory")
	}
	if _, err := ParseMode(string(cfg.DefaultMode)); err != nil {
		return nil, fmt.Errorf("testcsi: default mode: %w", err)
	}
	d := &Driver{cfg: cfg, state: state{dir: cfg.StateDir}, disk: disk{cmd: execx.Local{}}}
	if err := d.state.init(); err != nil {
		return nil, fmt.Errorf("testcsi: state directory: %w", err)
	}
	return d, nil
}

// Config returns the driver's settings with defaults filled in.
func (d *Driver) Config() Config { return d.cfg }

// Serve serves the driver's CSI services on l until ctx is done or l fails.
func (d *Driver) Serve(ctx context.Context, l net.Listener) error {
	s := grpc.NewServer()
	csi.RegisterIdentityServer(s, identity{d: d})
	if d.cfg.Role == RoleController {
		csi.RegisterControllerServer(s, controller{d: d})
	} else {
		csi.RegisterNodeServer(s, node{d: d})
	}
	return serve(ctx, s, l)
}

// ServeRegistration serves the kubelet's plugin registration service on l
// (a socket in the kubelet's plugins_registry directory), announcing the
// CSI endpoint csiSocket.
func (d *Driver) ServeRegistration(ctx context.Context, l net.Listener, csiSocket string) error {
	s := grpc.NewServer()
	registerapi.RegisterRegistrationServer(s, &registration{name: d.cfg.Name, endpoint: csiSocket})
	return serve(ctx, s, l)
}

func serve(ctx context.Context, s *grpc.Server, l net.Listener) error {
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-stopped:
		}
	}()
	err := s.Serve(l)
	close(stopped)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// registration answers the kubelet's plugin watcher.
type registration struct {
	registerapi.UnimplementedRegistrationServer
	name, endpoint string

	mu     sync.Mutex
	status *registerapi.RegistrationStatus
}

func (r *registration) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	// The kubelet refuses a CSI plugin without a supported version.
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              r.name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registration) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	r.mu.Lock()
	r.status = st
	r.mu.Unlock()
	return &registerapi.RegistrationStatusResponse{}, nil
}

type identity struct {
	csi.UnimplementedIdentityServer
	d *Driver
}

func (i identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: i.d.cfg.Name, VendorVersion: i.d.cfg.Version}, nil
}

func (i identity) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	caps := []*csi.PluginCapability{
		{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS}}},
		{Type: &csi.PluginCapability_VolumeExpansion_{VolumeExpansion: &csi.PluginCapability_VolumeExpansion{Type: csi.PluginCapability_VolumeExpansion_ONLINE}}},
	}
	if i.d.cfg.Role == RoleController {
		caps = append(caps, &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}}})
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

func (identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

// errStatus turns an error into a gRPC status, keeping one that already is.
func errStatus(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Internal, "%s: %v", fmt.Sprintf(format, args...), err)
}
