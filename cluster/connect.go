package cluster

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neateval/neateval/config"
)

// TokenEnv is the environment variable a NATS token may be passed in.
const TokenEnv = "NEATEVAL_NATS_TOKEN"

// Connect opens a connection to the NATS server at url with the [cluster]
// credentials and TLS files of c (and the token of $NEATEVAL_NATS_TOKEN).
// It reconnects for ever: a broker restarted during a run is waited for.
func Connect(url, name string, c *config.ClusterConfig) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	more, err := authOptions(c)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(url, append(opts, more...)...)
	if err != nil {
		return nil, &ConnectError{URL: redact(url), Presented: presented(url, c), Err: err}
	}
	return nc, nil
}

// ConnectError is a connection to a NATS server that failed: the server
// refused the credentials, TLS failed, or none answered. It names the
// server (its URL without user information) and what was presented to it,
// never a secret:
//
//	nats nats://10.0.0.5:4222 (presented: nkey seed file /etc/neateval/worker.nk): nats: authorization violation
type ConnectError struct {
	URL       string // without user information
	Presented string // the credentials and TLS files presented, or "no credentials"
	Err       error  // nats.go's: nats.ErrAuthorization, a TLS or network error, ...
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("nats %s (presented: %s): %v", e.URL, e.Presented, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// presented says which credentials and TLS files a connection to url with
// c presents: the keys and paths, not their contents.
func presented(url string, c *config.ClusterConfig) string {
	var p []string
	if c.Credentials != "" {
		p = append(p, "credentials file "+c.Credentials+" (cluster.credentials)")
	}
	if c.NKey != "" {
		p = append(p, "nkey seed file "+c.NKey+" (cluster.nkey)")
	}
	switch {
	case c.TokenFile != "":
		p = append(p, "token of file "+c.TokenFile+" (cluster.token_file)")
	case os.Getenv(TokenEnv) != "":
		p = append(p, "token of $"+TokenEnv)
	}
	if redact(url) != url {
		p = append(p, "user information in the URL")
	}
	if c.TLSCert != "" {
		p = append(p, "client certificate "+c.TLSCert+" (cluster.tls_cert)")
	}
	if len(p) == 0 {
		p = append(p, "no credentials")
	}
	if c.TLSCA != "" {
		p = append(p, "TLS CA "+c.TLSCA+" (cluster.tls_ca)")
	}
	return strings.Join(p, ", ")
}

// authOptions are nats.go's options for the credentials and TLS files.
func authOptions(c *config.ClusterConfig) ([]nats.Option, error) {
	var opts []nats.Option
	if c.Credentials != "" {
		opts = append(opts, nats.UserCredentials(c.Credentials))
	}
	if c.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("cluster.nkey %s: %w", c.NKey, err)
		}
		opts = append(opts, o)
	}
	tok := os.Getenv(TokenEnv)
	if c.TokenFile != "" {
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("cluster.token_file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			return nil, fmt.Errorf("cluster.token_file %s: %w", c.TokenFile, errors.New("empty"))
		}
	}
	if tok != "" {
		opts = append(opts, nats.Token(tok))
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	return opts, nil
}

// redact is url without the user information it may hold (nats.go's
// ConnectedUrlRedacted hides a password but not a token: nats://TOKEN@host).
func redact(url string) string {
	if at := strings.LastIndex(url, "@"); at >= 0 {
		if s := strings.Index(url, "://"); s >= 0 && s < at {
			return url[:s+3] + "[REDACTED]" + url[at:]
		}
		return "[REDACTED]" + url[at:]
	}
	return url
}
