package serve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/neateval/neateval/serve"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"127.1.2.3:0", "", true},
		{"[::1]:8080", "", true},
		{"localhost:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"[::]:8080", "", false},
		{"192.168.1.5:8080", "", false},
		{"example.org:80", "", false},
		{"0.0.0.0:8080", "s3cret", true},
	}
	for _, tt := range tests {
		err := serve.CheckAddr(tt.addr, tt.token)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, serve.ErrTokenRequired)) {
			t.Errorf("CheckAddr(%q, %q) = %v", tt.addr, tt.token, err)
		}
	}
}

// TestNewRefusesOpenAddrWithoutToken: the service does not start on an
// address beyond loopback without a token.
func TestNewRefusesOpenAddrWithoutToken(t *testing.T) {
	_, err := serve.New(testConfig(t), serve.Options{Addr: "0.0.0.0:0"})
	if !errors.Is(err, serve.ErrTokenRequired) {
		t.Fatalf("New: %v, want ErrTokenRequired", err)
	}
	s, err := serve.New(testConfig(t), serve.Options{Addr: "0.0.0.0:0", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tok")
	os.WriteFile(p, []byte("  s3cret \nsecond line\n"), 0o600)
	if tok, err := serve.ReadToken(p); err != nil || tok != "s3cret" {
		t.Errorf("ReadToken = %q, %v", tok, err)
	}
	os.WriteFile(p, []byte("\n"), 0o600)
	if _, err := serve.ReadToken(p); err == nil {
		t.Error("an empty token was accepted")
	}
}

// serveOn runs s on a real listener on 127.0.0.1 until the test ends; it
// returns the address and a function that stops it and returns Serve's
// error.
func serveOn(t *testing.T, s *serve.Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() {
			cancel()
			serr = <-done
		})
		return serr
	}
	t.Cleanup(func() { stop() })
	return ln.Addr().String(), stop
}

// TestToken: with a token, every request but health needs it (401 with
// WWW-Authenticate otherwise), on a real listener.
func TestToken(t *testing.T) {
	addr, _ := serveOn(t, newServer(t, serve.Options{Token: "s3cret"}))
	base := "http://" + addr
	js, st := files(t, population(t, t.TempDir(), 1, 1))
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret2", "s3cret", "Basic s3cret"} {
		for _, req := range []*http.Request{
			mustRequest(t, "GET", base+"/v1/status"), mustRequest(t, "GET", base+"/metrics"),
			mustRequest(t, "GET", base+"/nowhere"), uploadRequest(t, context.Background(), base, "", js, st),
		} {
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if msg := errorOf(t, resp); resp.StatusCode != 401 || msg != "missing or wrong bearer token" ||
				resp.Header.Get("WWW-Authenticate") != `Bearer realm="neateval"` {
				t.Errorf("%s %s with %q: %d %q", req.Method, req.URL.Path, auth, resp.StatusCode, msg)
			}
			resp.Body.Close()
		}
	}
	for _, req := range []*http.Request{mustRequest(t, "GET", base+"/v1/health"), withAuth(mustRequest(t, "GET", base+"/v1/status")),
		withAuth(uploadRequest(t, context.Background(), base, "?limit=5", js, st))} {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Errorf("%s with the token: %d", req.URL.Path, resp.StatusCode)
		}
		readAll(resp)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func withAuth(r *http.Request) *http.Request {
	r.Header.Set("Authorization", "Bearer s3cret")
	return r
}

func readAll(resp *http.Response) {
	buf := make([]byte, 4096)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			break
		}
	}
	resp.Body.Close()
}

// TestTLS: with a certificate and a key the service speaks HTTPS only.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	s := newServer(t, serve.Options{TLSCert: certFile, TLSKey: keyFile})
	addr, _ := serveOn(t, s)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + addr + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("https: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	readAll(resp)
	if resp, err := http.Get("http://" + addr + "/v1/health"); err == nil {
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered 200 on the TLS port")
		}
		resp.Body.Close()
	}
	if _, err := serve.New(testConfig(t), serve.Options{TLSCert: certFile}); err == nil {
		t.Error("a certificate without a key was accepted")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key,
// made now, and returns their files and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "neateval test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
