package cluster_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
)

// A server that wants a token: the token from cluster.token_file, from
// $NEATEVAL_NATS_TOKEN or in the URL lets a worker and a coordinator in; a wrong one,
// none, or a missing file is refused with a message naming what was
// presented; the token is in no error and no log line.
func TestTokenAuth(t *testing.T) {
	const token = "tok-9f1c2e77b3"
	dir := t.TempDir()
	good := writeFile(t, dir, "token", token+"\n")
	bad := writeFile(t, dir, "wrong", "tok-wrong-5521\n")
	secrets := []string{token, "tok-wrong-5521"}
	server := func() string { return natsServer(t, func(o *server.Options) { o.Authorization = token }) }

	t.Setenv(cluster.TokenEnv, "")
	noSecret(t, "logs (token_file)", scoreOver(t, server(), config.ClusterConfig{TokenFile: good}), secrets)
	t.Setenv(cluster.TokenEnv, token)
	noSecret(t, "logs ($"+cluster.TokenEnv+")", scoreOver(t, server(), config.ClusterConfig{}), secrets)
	t.Setenv(cluster.TokenEnv, "")
	inURL := strings.Replace(server(), "nats://", "nats://"+token+"@", 1)
	noSecret(t, "logs (the URL's)", scoreOver(t, inURL, config.ClusterConfig{}), secrets)

	url := server()
	t.Setenv(cluster.TokenEnv, "")
	refused(t, "wrong token file", url, config.ClusterConfig{TokenFile: bad}, secrets,
		"Authorization Violation", "presented: token of file "+bad+" (cluster.token_file)")
	refused(t, "no token", url, config.ClusterConfig{}, secrets, "Authorization Violation", "presented: no credentials")
	refused(t, "missing token file", url, config.ClusterConfig{TokenFile: dir + "/none"}, secrets, "cluster.token_file", dir+"/none")
	t.Setenv(cluster.TokenEnv, "tok-wrong-5521")
	refused(t, "wrong token in the environment", url, config.ClusterConfig{}, secrets,
		"Authorization Violation", "presented: token of $"+cluster.TokenEnv)
	refused(t, "token in the URL", strings.Replace(url, "nats://", "nats://tok-wrong-5521@", 1), config.ClusterConfig{}, secrets,
		"Authorization Violation", "[REDACTED]", "user information in the URL")

	_, err := cluster.Connect(url, "test", &config.ClusterConfig{TokenFile: bad})
	var ce *cluster.ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("a wrong token: %#v, want a *ConnectError wrapping nats.ErrAuthorization", err)
	}
}

// A user and password in the URL (a broker's BrokerOptions.User and
// Password): let in, and the password is in no log line; refused with a
// wrong one, the error hides it.
func TestPasswordInURL(t *testing.T) {
	const password = "pw-3e8d0b61"
	url := natsServer(t, func(o *server.Options) { o.Username, o.Password = "neateval", password })
	t.Setenv(cluster.TokenEnv, "")
	secrets := []string{password, "pw-wrong-77"}
	noSecret(t, "logs", scoreOver(t, strings.Replace(url, "nats://", "nats://neateval:"+password+"@", 1), config.ClusterConfig{}), secrets)
	refused(t, "a wrong password", strings.Replace(url, "nats://", "nats://neateval:pw-wrong-77@", 1), config.ClusterConfig{}, secrets,
		"Authorization Violation", "nats://[REDACTED]@127.0.0.1", "presented: user information in the URL")
}

// A server that knows a user by its nkey: the user's seed file
// (cluster.nkey) lets a worker and a coordinator in; another user's seed,
// none, or a file that holds no seed is refused, naming the file; no seed
// is in an error or a log line.
func TestNKeyAuth(t *testing.T) {
	user, seed := newUser(t)
	_, other := newUser(t)
	dir := t.TempDir()
	good := writeFile(t, dir, "user.nk", seed)
	wrong := writeFile(t, dir, "other.nk", other)
	garbage := writeFile(t, dir, "garbage.nk", "not a seed\n")
	secrets := []string{seed, other}
	server := func() string {
		return natsServer(t, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: user}} })
	}
	t.Setenv(cluster.TokenEnv, "")
	noSecret(t, "logs", scoreOver(t, server(), config.ClusterConfig{NKey: good}), secrets)

	url := server()
	refused(t, "another user's seed", url, config.ClusterConfig{NKey: wrong}, secrets,
		"Authorization Violation", "presented: nkey seed file "+wrong+" (cluster.nkey)")
	refused(t, "no seed", url, config.ClusterConfig{}, secrets, "Authorization Violation", "presented: no credentials")
	refused(t, "a file with no seed", url, config.ClusterConfig{NKey: garbage}, secrets, "cluster.nkey "+garbage)
	refused(t, "missing seed file", url, config.ClusterConfig{NKey: dir + "/none"}, secrets, "cluster.nkey "+dir+"/none")
}

// A server in operator mode (an operator, an account with JetStream and a
// user, as JWTs; a memory resolver): the user's .creds file
// (cluster.credentials) lets a worker and a coordinator in; a user of an
// account the server does not know, an expired user, or a missing file is
// refused, naming the file; neither the JWT nor the seed is in an error or
// a log line.
func TestCredsAuth(t *testing.T) {
	op := newOperator(t)
	dir := t.TempDir()
	good, goodSecrets := op.creds(t, op.account, 0)
	foreign, foreignSecrets := op.creds(t, newKey(t, nkeys.CreateAccount), 0)
	expired, expiredSecrets := op.creds(t, op.account, -1)
	goodFile := writeFile(t, dir, "user.creds", good)
	foreignFile := writeFile(t, dir, "foreign.creds", foreign)
	expiredFile := writeFile(t, dir, "expired.creds", expired)
	secrets := append(append(goodSecrets, foreignSecrets...), expiredSecrets...)
	t.Setenv(cluster.TokenEnv, "")
	noSecret(t, "logs", scoreOver(t, op.server(t), config.ClusterConfig{Credentials: goodFile}), secrets)

	url := op.server(t)
	refused(t, "a user of an unknown account", url, config.ClusterConfig{Credentials: foreignFile}, secrets,
		"Authorization Violation", "presented: credentials file "+foreignFile+" (cluster.credentials)")
	refused(t, "an expired user", url, config.ClusterConfig{Credentials: expiredFile}, secrets,
		"presented: credentials file "+expiredFile)
	refused(t, "no credentials", url, config.ClusterConfig{}, secrets, "Authorization Violation", "presented: no credentials")
	refused(t, "missing credentials file", url, config.ClusterConfig{Credentials: dir + "/none"}, secrets,
		dir+"/none", "no such file")
}

// A server that requires TLS: the CA file (cluster.tls_ca) lets a worker
// and a coordinator in; no CA or another CA is refused, saying the
// certificate is not trusted.
func TestTLS(t *testing.T) {
	p, other := newPKI(t, "neateval test CA"), newPKI(t, "another CA")
	server := func() string { return natsServer(t, tlsServer(t, p, false)) }
	t.Setenv(cluster.TokenEnv, "")
	scoreOver(t, server(), config.ClusterConfig{TLSCA: p.CA})

	url := server()
	refused(t, "no CA", url, config.ClusterConfig{}, nil, "certificate", "presented: no credentials")
	refused(t, "another CA", url, config.ClusterConfig{TLSCA: other.CA}, nil,
		"certificate signed by unknown authority", "TLS CA "+other.CA+" (cluster.tls_ca)")
}

// A server that verifies client certificates: a certificate of its CA
// (cluster.tls_cert, tls_key) lets a worker and a coordinator in; none, or
// one of another CA, is refused; the client's key is in no error and no
// log line.
func TestTLSClientCerts(t *testing.T) {
	p, other := newPKI(t, "neateval test CA"), newPKI(t, "another CA")
	server := func() string { return natsServer(t, tlsServer(t, p, true)) }
	secrets := []string{p.ClientKeyBody, other.ClientKeyBody}
	t.Setenv(cluster.TokenEnv, "")
	noSecret(t, "logs", scoreOver(t, server(), config.ClusterConfig{TLSCA: p.CA, TLSCert: p.ClientCert, TLSKey: p.ClientKey}), secrets)

	url := server()
	refused(t, "no client certificate", url, config.ClusterConfig{TLSCA: p.CA}, secrets, "presented: no credentials, TLS CA "+p.CA)
	refused(t, "a certificate of another CA", url, config.ClusterConfig{TLSCA: p.CA, TLSCert: other.ClientCert, TLSKey: other.ClientKey},
		secrets, "presented: client certificate "+other.ClientCert+" (cluster.tls_cert), TLS CA "+p.CA)
}

func tlsServer(t *testing.T, p *pki, verify bool) func(*server.Options) {
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: p.ServerCert, KeyFile: p.ServerKey, CaFile: p.CA, Verify: verify, Timeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	return func(o *server.Options) { o.TLS, o.TLSVerify, o.TLSConfig, o.TLSTimeout = true, verify, tc, 2 }
}

// newUser is a user nkey: its public key and its seed.
func newUser(t *testing.T) (public, seed string) {
	kp := newKey(t, nkeys.CreateUser)
	pub, _ := kp.PublicKey()
	s, _ := kp.Seed()
	return pub, string(s)
}

func newKey(t *testing.T, create func() (nkeys.KeyPair, error)) nkeys.KeyPair {
	t.Helper()
	kp, err := create()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// operator is an operator, one account of it with JetStream and its
// system account, as a server in operator mode trusts them.
type operator struct {
	key, account, system nkeys.KeyPair
	claims               *jwt.OperatorClaims
	accountJWT, sysJWT   string
}

func newOperator(t *testing.T) *operator {
	t.Helper()
	op := &operator{key: newKey(t, nkeys.CreateOperator), account: newKey(t, nkeys.CreateAccount), system: newKey(t, nkeys.CreateAccount)}
	opub, _ := op.key.PublicKey()
	spub, _ := op.system.PublicKey()
	op.claims = jwt.NewOperatorClaims(opub)
	op.claims.SystemAccount = spub
	if _, err := op.claims.Encode(op.key); err != nil { // signs the claims
		t.Fatal(err)
	}
	apub, _ := op.account.PublicKey()
	ac := jwt.NewAccountClaims(apub)
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	var err error
	if op.accountJWT, err = ac.Encode(op.key); err != nil {
		t.Fatal(err)
	}
	if op.sysJWT, err = jwt.NewAccountClaims(spub).Encode(op.key); err != nil {
		t.Fatal(err)
	}
	return op
}

// server starts a NATS server in operator mode that knows op's account.
func (op *operator) server(t *testing.T) string {
	t.Helper()
	r := &server.MemAccResolver{}
	apub, _ := op.account.PublicKey()
	spub, _ := op.system.PublicKey()
	if err := r.Store(apub, op.accountJWT); err != nil {
		t.Fatal(err)
	}
	if err := r.Store(spub, op.sysJWT); err != nil {
		t.Fatal(err)
	}
	url := natsServer(t, func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{op.claims}
		o.AccountResolver, o.SystemAccount = r, spub
	})
	// The server registers an account at its first connection. Two first
	// connections at once (a worker's and a coordinator's) race in the
	// server: seen here as "error creating store for stream" (setup tries
	// again) and, 3 times in 200 runs, a publish never acknowledged (none
	// in 200 runs with the account registered first). One connection
	// before the test's registers it.
	creds, _ := op.creds(t, op.account, 0)
	nc, err := cluster.Connect(url, "register", &config.ClusterConfig{Credentials: writeFile(t, t.TempDir(), "register.creds", creds)})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	return url
}

// creds is a .creds file of a new user of account, expired when expires
// is negative, and its secrets: the user's JWT and seed.
func (op *operator) creds(t *testing.T, account nkeys.KeyPair, expires int) (string, []string) {
	t.Helper()
	pub, seed := newUser(t)
	uc := jwt.NewUserClaims(pub)
	if expires < 0 {
		uc.IssuedAt, uc.Expires = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	}
	ujwt, err := uc.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(ujwt, []byte(seed))
	if err != nil {
		t.Fatal(err)
	}
	return string(creds), []string{ujwt, seed}
}
