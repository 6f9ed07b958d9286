package cluster_test

import (
	"errors"
	"testing"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
)

// The broker listens beyond loopback only with credentials, and then
// refuses clients without them.
func TestBrokerSecurity(t *testing.T) {
	if _, err := cluster.StartBroker(cluster.BrokerOptions{Host: "0.0.0.0", Port: -1}); !errors.Is(err, cluster.ErrNoCredentials) {
		t.Fatalf("StartBroker beyond loopback without credentials: %v, want ErrNoCredentials", err)
	}
	b, err := cluster.StartBroker(cluster.BrokerOptions{Host: "127.0.0.1", Port: 0, Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	t.Setenv(cluster.TokenEnv, "")
	if nc, err := cluster.Connect(b.ClientURL(), "no token", &config.ClusterConfig{}); err == nil {
		nc.Close()
		t.Fatal("a client without the token was let in")
	}
	t.Setenv(cluster.TokenEnv, "s3cret")
	nc, err := cluster.Connect(b.ClientURL(), "token", &config.ClusterConfig{})
	if err != nil {
		t.Fatalf("a client with the token from $%s: %v", cluster.TokenEnv, err)
	}
	nc.Close()
}
