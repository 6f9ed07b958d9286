package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// authorized checks the bearer token, when one is configured, on every
// request but GET /v1/health. The comparison takes the same time whatever
// the token sent (both sides hashed to one length, compared in constant
// time).
func (s *Server) authorized(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.opts.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/health" {
			next.ServeHTTP(w, r)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="neateval"`)
			writeError(w, errorf(http.StatusUnauthorized, "missing or wrong bearer token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// statusClientGone is the status a request is logged with when its
// client went away (nginx's 499): nothing more was written to it.
const statusClientGone = 499

// record is what the request line logs beyond the method, path and
// status; the evaluate handler fills it.
type record struct {
	http.ResponseWriter
	status    int
	genomes   int
	failed    int
	evaluated bool // genomes and failed are set
	cancelled bool // the client went away
	run       string
}

func (rec *record) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *record) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (rec *record) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// Flush sends what was written.
func (rec *record) Flush() {
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logged logs one request line per request and counts it in the metrics.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &record{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if rec.cancelled {
			status = statusClientGone
		}
		sec := time.Since(start).Seconds()
		s.metrics.request(metricPath(r.URL.Path), status, sec)
		lvl := zerolog.InfoLevel
		if status >= 500 && status != statusClientGone {
			lvl = zerolog.WarnLevel
		}
		e := s.log.WithLevel(lvl).Str(KeyEvent, EventRequest).Str(KeyMethod, r.Method).Str(KeyPath, r.URL.Path).
			Int(KeyStatus, status).Float64(KeySeconds, sec)
		if rec.evaluated {
			e = e.Int(KeyGenomes, rec.genomes).Int(KeyFailed, rec.failed).Str(KeyRun, rec.run)
		}
		if rec.cancelled {
			e = e.Bool(KeyCancelled, true)
		}
		e.Msgf("%s %s %d", r.Method, r.URL.Path, status)
	})
}

// recordOf is the request's record, set up by logged.
func recordOf(w http.ResponseWriter) *record {
	if rec, ok := w.(*record); ok {
		return rec
	}
	return &record{ResponseWriter: w} // not through logged: nothing records it
}

// metricPath is the path label of a request: its path when known, else
// "other", so that scanners cannot grow the label set.
func metricPath(p string) string {
	switch p {
	case "/v1/health", "/v1/status", "/v1/evaluate", "/metrics":
		return p
	}
	return "other"
}
