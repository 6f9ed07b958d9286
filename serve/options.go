package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
)

// Defaults of Options.
const (
	DefaultAddr    = "127.0.0.1:8080"
	DefaultMaxBody = 1 << 30
	DefaultQueue   = 4
)

// TokenEnv is the environment variable that gives the bearer token when no
// token file does.
const TokenEnv = "NEATEVAL_TOKEN"

// ErrTokenRequired is matched (errors.Is) by New's error when the address
// is not loopback and no token is given.
var ErrTokenRequired = errors.New("an address that is not loopback needs a bearer token")

// Options configure a Server beyond the config's keys.
type Options struct {
	// Addr is where to listen, host:port ("" = DefaultAddr); port 0 picks
	// a free port. An address that is not loopback needs Token.
	Addr string
	// Token, when set, must be sent as "Authorization: Bearer <Token>"
	// with every request but GET /v1/health.
	Token string
	// TLSCert and TLSKey, both or neither, are PEM files: with them the
	// service speaks HTTPS.
	TLSCert, TLSKey string
	// AllowDirs are the folders the path form of POST /v1/evaluate may
	// read populations from; none: the path form is refused (403).
	AllowDirs []string
	// MaxBody is the largest request body in bytes (0: DefaultMaxBody).
	MaxBody int64
	// Queue is how many requests may wait while one is scored (0: none;
	// the command's default is DefaultQueue).
	Queue int
	// Grace is how long a running evaluation may go on finishing once
	// Serve's context is cancelled, before it is cancelled (0: at once).
	Grace time.Duration
	// Logger receives the service's events and the libraries' (nil: none).
	Logger *zerolog.Logger
	// NewScorer makes the scorer of a data set: the server's, or its first
	// images for a request's limit. nil: an evaluator.Evaluator on the
	// configured backend. A cluster coordinator plugs in here; a scorer
	// with a Close method is closed when the server no longer needs it.
	NewScorer func(ds *datasets.Dataset) (evaluator.Scorer, error)
}

// checked is Options with defaults filled in and files opened.
type checked struct {
	Options
	tls   *tls.Config
	allow []string // AllowDirs, absolute with links resolved
}

func (o Options) check() (*checked, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Queue < 0 {
		return nil, fmt.Errorf("queue %d: want 0 or more", o.Queue)
	}
	if o.Grace < 0 {
		return nil, fmt.Errorf("grace %v: want 0 or more", o.Grace)
	}
	if err := CheckAddr(o.Addr, o.Token); err != nil {
		return nil, err
	}
	c := &checked{Options: o}
	var err error
	if c.tls, err = loadTLS(o.TLSCert, o.TLSKey); err != nil {
		return nil, err
	}
	for _, d := range o.AllowDirs {
		abs, err := allowDir(d)
		if err != nil {
			return nil, err
		}
		c.allow = append(c.allow, abs)
	}
	return c, nil
}

// CheckAddr says whether the service may listen on addr with token: an
// address that is not loopback ("localhost", 127.0.0.0/8, ::1) needs a
// token, and the error then matches ErrTokenRequired.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if token != "" || IsLoopback(host) {
		return nil
	}
	return fmt.Errorf("address %q: %w", addr, ErrTokenRequired)
}

// IsLoopback says whether host (a name or an IP, as in host:port) is a
// loopback host. An empty host is every interface: not loopback.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadToken reads a bearer token from the first line of the file at path,
// whitespace trimmed; an empty token is an error.
func ReadToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("token file %s: the first line is empty", path)
}

func loadTLS(cert, key string) (*tls.Config, error) {
	if cert == "" && key == "" {
		return nil, nil
	}
	if cert == "" || key == "" {
		return nil, errors.New("TLS needs both a certificate and a key")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

func allowDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("allowed folder: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("allowed folder %s: not a folder", d)
	}
	return abs, nil
}
