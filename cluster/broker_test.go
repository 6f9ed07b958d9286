package cluster_test

import (
	"context"
	"errors"
	"net"
	neturl "net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

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

// Port 0 picks a free port, for each broker its own (nats-server itself
// reads 0 as 4222).
func TestBrokerFreePort(t *testing.T) {
	var urls []string
	for range 2 {
		b, err := cluster.StartBroker(cluster.BrokerOptions{Port: 0})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Shutdown()
		urls = append(urls, b.ClientURL())
	}
	if urls[0] == urls[1] || strings.HasSuffix(urls[0], ":4222") {
		t.Errorf("two brokers on port 0 listen on %s and %s", urls[0], urls[1])
	}
}

// `neateval broker` (ServeBroker) listens on loopback unless told
// otherwise; beyond loopback it refuses to start without a token, and with
// the token of $NEATEVAL_NATS_TOKEN it starts and lets in only clients that
// present it. The token is in no log line.
func TestServeBrokerListen(t *testing.T) {
	const token = "tok-broker-71c0"
	t.Setenv(cluster.TokenEnv, "")
	if err := cluster.ServeBroker(t.Context(), cluster.BrokerOptions{Host: "0.0.0.0", Port: 0, StoreDir: t.TempDir()}, &nop); !errors.Is(err, cluster.ErrNoCredentials) {
		t.Fatalf("beyond loopback without a token: %v, want ErrNoCredentials", err)
	}

	url, logs := serveBroker(t, cluster.BrokerOptions{Port: 0, StoreDir: t.TempDir()})
	if host := hostOf(t, url); !net.ParseIP(host).IsLoopback() {
		t.Errorf("by default the broker listens on %s, want loopback", url)
	}
	if nc, err := cluster.Connect(url, "test", &config.ClusterConfig{}); err != nil {
		t.Errorf("a client on loopback: %v", err)
	} else {
		nc.Close()
	}
	noSecret(t, "the broker's logs", logs.String(), []string{token})

	t.Setenv(cluster.TokenEnv, token)
	url, logs = serveBroker(t, cluster.BrokerOptions{Host: "0.0.0.0", Port: 0, StoreDir: t.TempDir()})
	if host := hostOf(t, url); net.ParseIP(host).IsLoopback() {
		t.Errorf("told to listen on 0.0.0.0, the broker says %s", url)
	}
	if nc, err := cluster.Connect(url, "test", &config.ClusterConfig{}); err != nil {
		t.Errorf("a client with the token: %v", err)
	} else {
		nc.Close()
	}
	t.Setenv(cluster.TokenEnv, "")
	if nc, err := cluster.Connect(url, "test", &config.ClusterConfig{}); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Errorf("a client without the token: %v, want an authorization violation", err)
	}
	noSecret(t, "the broker's logs", logs.String(), []string{token})
}

// serveBroker runs ServeBroker until the test ends and returns the URL it
// logged it listens on, and its logs.
func serveBroker(t *testing.T, o cluster.BrokerOptions) (string, *syncBuffer) {
	t.Helper()
	var buf syncBuffer
	log := zerolog.New(&buf)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() { defer close(done); err = cluster.ServeBroker(ctx, o, &log) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	for range 400 {
		if m := regexp.MustCompile(`"url":"([^"]+)"`).FindStringSubmatch(buf.String()); m != nil {
			return m[1], &buf
		}
		select {
		case <-done:
			t.Fatalf("ServeBroker: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("the broker logged no URL in 20s:\n%s", buf.String())
	return "", nil
}

func hostOf(t *testing.T, url string) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname()
}
