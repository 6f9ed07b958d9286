package cluster_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
)

// natsServer starts a real NATS server with JetStream on 127.0.0.1 (a
// free port), with the authentication and TLS set adds, and returns its
// URL.
func natsServer(t *testing.T, set func(*server.Options)) string {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoSigs: true, NoLog: true, MaxPayload: 8 << 20}
	set(o)
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not become ready in 10s")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// syncBuffer is a log destination that goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// scoreOver scores a small population as users do, with the [cluster]
// credentials of cc: `neateval worker` (RunWorker) and `neateval run
// --nats` (run.Run on cluster.OpenRemote), both logging at debug level
// into the returned text.
func scoreOver(t *testing.T, url string, cc config.ClusterConfig) (logs string) {
	t.Helper()
	cfg := testConfig(4)
	cc.NATSURL, cc.ItemGenomes = url, 2
	cfg.Cluster = cc
	cfg.Output.Results = filepath.Join(t.TempDir(), "results.jsonl")
	var buf syncBuffer
	log := run.NewLogger("json", "debug", &buf)
	ctx, stop := context.WithCancel(withTimeout(t, time.Minute))
	werr := make(chan error, 1)
	go func() { werr <- cluster.RunWorker(ctx, cfg, cluster.WorkerSpec{Name: "w"}, &log) }()
	s, err := run.Run(ctx, run.Spec{Config: cfg, Logger: &log, Remote: cluster.OpenRemote})
	stop()
	if wErr := <-werr; err != nil || wErr != nil {
		t.Fatalf("over %s: the run: %v; the worker: %v\n%s", url, err, wErr, buf.String())
	}
	if s.Remote == nil || s.Remote.Items < 2 || !strings.Contains(buf.String(), `"event":"item_done"`) {
		t.Fatalf("the worker scored nothing: %+v\n%s", s.Remote, buf.String())
	}
	return buf.String()
}

// refused checks that a connection with cc fails, on its own (Connect),
// for a worker (RunWorker) and for a coordinator (cluster.Open), with a
// message that holds each of want, and that neither the errors nor the
// logs hold any of the secrets.
func refused(t *testing.T, name, url string, cc config.ClusterConfig, secrets []string, want ...string) {
	t.Helper()
	nc, err := cluster.Connect(url, "test", &cc)
	if err == nil {
		nc.Close()
	}
	cfg := testConfig(2)
	cfg.Cluster, cfg.Cluster.NATSURL = cc, url
	var buf syncBuffer
	log := run.NewLogger("json", "debug", &buf)
	werr := cluster.RunWorker(withTimeout(t, 30*time.Second), cfg, cluster.WorkerSpec{Name: "w"}, &log)
	ds, derr := run.OpenDataset(cfg, &nop)
	if derr != nil {
		t.Fatal(derr)
	}
	_, oerr := cluster.Open(cfg, ds, &log)
	t.Logf("%s: %v", name, err)
	for who, err := range map[string]error{"Connect": err, "the worker": werr, "the coordinator": oerr} {
		if err == nil {
			t.Fatalf("%s: %s connected", name, who)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %s: %q lacks %q", name, who, err, w)
			}
		}
		noSecret(t, name+": "+who+"'s error", err.Error(), secrets)
	}
	noSecret(t, name+": logs", buf.String(), secrets)
}

// noSecret fails the test if text holds any of secrets.
func noSecret(t *testing.T, where, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s holds a secret (%.8s…):\n%s", where, s, text)
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// pki is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files.
type pki struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
	// ClientKeyBody is the base64 body of the client's key: a secret.
	ClientKeyBody string
}

// newPKI makes a CA (named cn) and its certificates in a fresh folder.
func newPKI(t *testing.T, cn string) *pki {
	t.Helper()
	dir := t.TempDir()
	caKey, ca := newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	p := &pki{CA: writeFile(t, dir, "ca.pem", pemBlock("CERTIFICATE", ca.Raw))}
	sKey, sCert := newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "nats"}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, caKey)
	p.ServerCert = writeFile(t, dir, "server.pem", pemBlock("CERTIFICATE", sCert.Raw))
	p.ServerKey = writeFile(t, dir, "server-key.pem", keyPEM(t, sKey))
	cKey, cCert := newCert(t, &x509.Certificate{
		Subject:  pkix.Name{CommonName: "worker"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	p.ClientCert = writeFile(t, dir, "client.pem", pemBlock("CERTIFICATE", cCert.Raw))
	ck := keyPEM(t, cKey)
	p.ClientKey = writeFile(t, dir, "client-key.pem", ck)
	p.ClientKeyBody = strings.Split(ck, "\n")[1]
	return p
}

var serial int64

// newCert signs tmpl with parent's key (itself when parent is nil).
func newCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

func keyPEM(t *testing.T, key *ecdsa.PrivateKey) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("PRIVATE KEY", der)
}

func pemBlock(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}
