package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// closeAfterGrace is how long, past the grace period, the shutdown waits
// for connections (a stalled upload, say) before closing them.
const closeAfterGrace = 5 * time.Second

// ListenAndServe listens on Options.Addr and serves until ctx is
// cancelled (see Serve).
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves the API on ln (with TLS when configured) until ctx is
// cancelled, then shuts down: it stops accepting, the waiting requests
// leave the queue (their streams end with an error line), the running
// evaluation has Options.Grace to finish before it is cancelled, and
// serve_stopped says which happened. It returns nil after a shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.opts.tls != nil {
		ln = tls.NewListener(ln, s.opts.tls)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0), // TLS handshakes of scanners, mostly
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info().Str(KeyEvent, EventServeListening).Str(KeyAddr, ln.Addr().String()).
		Bool(KeyTLS, s.opts.tls != nil).Bool(KeyAuth, s.opts.Token != "").
		Int(KeyQueue, s.opts.Queue).Strs(KeyAllowDirs, s.opts.allow).
		Msgf("listening on %s://%s", s.scheme(), ln.Addr())
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return s.shutdown(srv, errc)
}

func (s *Server) scheme() string {
	if s.opts.tls != nil {
		return "https"
	}
	return "http"
}

// shutdown stops srv as Serve describes.
func (s *Server) shutdown(srv *http.Server, errc <-chan error) error {
	busy := s.running.Load() != nil
	s.log.Info().Str(KeyEvent, EventServeStopping).Float64(KeyGrace, s.opts.Grace.Seconds()).
		Msgf("stopping: no new requests; the running evaluation has %v to finish", s.opts.Grace)
	s.cancelDrain()
	grace := time.AfterFunc(s.opts.Grace, s.cancelStop)
	defer grace.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Grace+closeAfterGrace)
	defer cancel()
	err := srv.Shutdown(ctx)
	if err != nil {
		srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	outcome := OutcomeIdle
	switch {
	case s.stoppedRunning.Load():
		outcome = OutcomeCancelled
	case busy:
		outcome = OutcomeFinished
	}
	lvl := zerolog.InfoLevel
	if outcome == OutcomeCancelled {
		lvl = zerolog.WarnLevel
	}
	s.log.WithLevel(lvl).Str(KeyEvent, EventServeStopped).Str(KeyOutcome, outcome).
		Msgf("stopped: the running evaluation %s", map[string]string{
			OutcomeIdle: "(none)", OutcomeFinished: "finished", OutcomeCancelled: "was cancelled",
		}[outcome])
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
