package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// BrokerOptions configure an embedded NATS server with JetStream.
type BrokerOptions struct {
	// Host is the address to listen on (default 127.0.0.1). Any other
	// than a loopback address requires Token or User and Password.
	Host string
	// Port to listen on: 0 picks a free one; -1 listens on no socket at all
	// (in-process connections only).
	Port int
	// StoreDir is where JetStream keeps its file store; "" keeps the
	// streams in a temporary folder removed by Shutdown.
	StoreDir string
	// Token, or User and Password, are what clients must present.
	Token          string
	User, Password string
}

// ErrNoCredentials is StartBroker's refusal to listen beyond loopback
// without credentials.
var ErrNoCredentials = errors.New("the broker listens beyond loopback: it needs a token or a user and password")

// Broker is an embedded NATS server with JetStream.
type Broker struct {
	srv  *server.Server
	opts BrokerOptions
	tmp  string
}

// StartBroker starts an embedded NATS server with JetStream and waits until
// it accepts connections.
func StartBroker(o BrokerOptions) (*Broker, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if !isLoopback(o.Host) && o.Token == "" && (o.User == "" || o.Password == "") {
		return nil, fmt.Errorf("broker on %s: %w", o.Host, ErrNoCredentials)
	}
	b := &Broker{opts: o}
	dir := o.StoreDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "neateval-broker-")
		if err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		b.tmp, dir = tmp, tmp
	}
	so := &server.Options{
		Host: o.Host, Port: o.Port, JetStream: true, StoreDir: dir,
		DontListen: o.Port < 0, NoSigs: true, NoLog: true,
		Authorization: o.Token, Username: o.User, Password: o.Password,
		MaxPayload: 8 << 20,
	}
	switch {
	case o.Port < 0:
		so.Port = 0
	case o.Port == 0:
		so.Port = server.RANDOM_PORT // nats-server's 0 is its default port, 4222
	}
	srv, err := server.NewServer(so)
	if err != nil {
		b.removeTmp()
		return nil, fmt.Errorf("broker: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		b.removeTmp()
		return nil, errors.New("broker: the server did not become ready in 10s")
	}
	b.srv = srv
	return b, nil
}

// ClientURL is the URL clients on other processes connect to ("" when the
// broker listens on no socket).
func (b *Broker) ClientURL() string {
	if b.opts.Port < 0 {
		return ""
	}
	return b.srv.ClientURL()
}

// Connect opens an in-process connection to the broker (no socket).
func (b *Broker) Connect(name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(b.srv), nats.Name(name), nats.MaxReconnects(-1)}
	if b.opts.Token != "" {
		opts = append(opts, nats.Token(b.opts.Token))
	}
	if b.opts.User != "" {
		opts = append(opts, nats.UserInfo(b.opts.User, b.opts.Password))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and waits for it; a temporary store is
// removed.
func (b *Broker) Shutdown() {
	b.srv.Shutdown()
	b.srv.WaitForShutdown()
	b.removeTmp()
}

func (b *Broker) removeTmp() {
	if b.tmp != "" {
		os.RemoveAll(b.tmp)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
