package result

// Values of LabelReplicationModel.
const (
	// ReplicationClient: the client writes every copy itself (GlusterFS's
	// FUSE client, Longhorn's engine): its link carries replicas x payload.
	ReplicationClient = "client"
	// ReplicationPrimary: the client sends each write once, to a primary
	// that forwards the other copies (Ceph).
	ReplicationPrimary = "primary"
	// ReplicationServer: one server keeps the data, no replication seen
	// from the client (NFS, SMB, sshfs from a NAS).
	ReplicationServer = "server"
)
