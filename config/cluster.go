package config

// ClusterConfig is the [cluster] table: scoring on workers through NATS
// JetStream (package cluster) instead of on this process's device.
type ClusterConfig struct {
	// NATSURL is the NATS server that run and evolve coordinate through,
	// and that workers take items from; empty: no server.
	NATSURL string `toml:"nats_url"`
	// Workers, with no nats_url, starts an in-process broker and this many
	// local workers (the CPU threads split between them); 0: score locally.
	Workers int `toml:"workers"`
	// ItemGenomes is the mean genomes per work item; ItemBytes bounds an
	// item's weights.
	ItemGenomes int      `toml:"item_genomes"`
	ItemBytes   ByteSize `toml:"item_bytes"`
	// AckWaitSeconds: an item neither acked nor signalled in progress for
	// this long goes to another worker.
	AckWaitSeconds float64 `toml:"ack_wait_seconds"`
	// MaxDeliver: an item handed out this many times without success gets
	// error results.
	MaxDeliver int `toml:"max_deliver"`
	// WorkerTimeoutSeconds: a coordinator that hears from no worker for
	// this long gives up.
	WorkerTimeoutSeconds float64 `toml:"worker_timeout_seconds"`
	// Credentials, NKey and TokenFile are files of the NATS credentials
	// (a .creds file, an nkey seed, a token); the token may instead be in
	// $NEATEVAL_NATS_TOKEN. TLSCA, TLSCert and TLSKey are PEM files.
	Credentials string `toml:"credentials"`
	NKey        string `toml:"nkey"`
	TokenFile   string `toml:"token_file"`
	TLSCA       string `toml:"tls_ca"`
	TLSCert     string `toml:"tls_cert"`
	TLSKey      string `toml:"tls_key"`
}

func defaultCluster() ClusterConfig {
	return ClusterConfig{ItemGenomes: 16, ItemBytes: 256 << 20, AckWaitSeconds: 30, MaxDeliver: 5, WorkerTimeoutSeconds: 30}
}

// Clustered says whether runs score on workers.
func (c *ClusterConfig) Clustered() bool { return c.NATSURL != "" || c.Workers > 0 }

func (c *ClusterConfig) validate(check func(ok bool, key string, v any, rule string, args ...any)) {
	check(c.Workers >= 0, "cluster.workers", c.Workers, "must be ≥ 0 (0 = score locally)")
	check(c.ItemGenomes >= 1, "cluster.item_genomes", c.ItemGenomes, "must be ≥ 1")
	check(c.ItemBytes >= 0, "cluster.item_bytes", c.ItemBytes, "must be ≥ 0 (0 = no bound)")
	check(c.AckWaitSeconds >= 1, "cluster.ack_wait_seconds", c.AckWaitSeconds, "must be ≥ 1")
	check(c.MaxDeliver >= 1, "cluster.max_deliver", c.MaxDeliver, "must be ≥ 1")
	check(c.WorkerTimeoutSeconds > 0, "cluster.worker_timeout_seconds", c.WorkerTimeoutSeconds, "must be > 0")
	check((c.TLSCert == "") == (c.TLSKey == ""), "cluster.tls_cert", c.TLSCert, "and cluster.tls_key go together")
}
