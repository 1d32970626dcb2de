package storbench

import (
	"context"
	"os"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
)

// cephCLICheck says where classes --measure --ceph-osd-failure (and cleanup
// --k8s --ceph) would run the ceph CLI: on this host, with CEPH_CONF or
// /etc/ceph/ceph.conf; nothing when neither names a cluster (no Ceph here).
func cephCLICheck(ctx context.Context, req DoctorRequest) []result.Check {
	conf := ""
	if req.Getenv != nil {
		conf = req.Getenv("CEPH_CONF")
	}
	where := "CEPH_CONF=" + conf
	if conf == "" {
		if _, err := os.Stat("/etc/ceph/ceph.conf"); err != nil {
			return nil
		}
		where = "/etc/ceph/ceph.conf"
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	h, err := ceph.Client{Cmder: execx.Local{}, Conf: conf}.Health(ctx)
	name := "ceph CLI (--ceph-osd-failure)"
	if err != nil {
		return []result.Check{{Area: "local", Name: name, Status: result.CheckWarn, Detail: "on this host with " + where + ": " + err.Error(),
			Fix: "install ceph-common and point CEPH_CONF (or --ceph-conf) at the cluster's ceph.conf with a keyring allowed to run ceph osd add-noup/down/rm-noup"}}
	}
	return []result.Check{{Area: "local", Name: name, Status: result.CheckInfo,
		Detail: "the ceph-osd-failure check runs the ceph CLI on this host with " + where + ": " + h.Status}}
}
