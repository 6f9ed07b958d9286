package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/serve"
)

// waitFor polls cond until it holds; the test fails after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited 20 s for %s", what)
}

// started is a request whose response (headers) came back, its body still
// streaming.
type started struct {
	resp   *http.Response
	cancel context.CancelFunc
}

func post(t *testing.T, base, query string, js, st []byte) started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(uploadRequest(t, ctx, base, query, js, st))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return started{resp, cancel}
}

// TestQueue: one evaluation runs, --queue wait in order, the next gets
// 503 with Retry-After; a broken request in between disturbs neither.
func TestQueue(t *testing.T) {
	g := newGate()
	s := newGatedServer(t, g, serve.Options{Queue: 2})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	js, st := files(t, population(t, t.TempDir(), 3, 2))

	a := post(t, ts.URL, "?limit=30", js, st)
	<-g.started // a has the device
	b := post(t, ts.URL, "?limit=30", js, st)
	bad := post(t, ts.URL, "?limit=x", js, st) // refused: its place freed at once
	if bad.resp.StatusCode != 400 {
		t.Fatalf("broken request: %d", bad.resp.StatusCode)
	}
	c := post(t, ts.URL, "?limit=30", js, st)
	if st := s.Status(); st.Queue.Length != 2 || st.Running == nil || st.Running.Genomes != 3 || st.Running.Images != 30 {
		t.Fatalf("status %+v", st)
	}
	full := post(t, ts.URL, "?limit=30", js, st)
	if full.resp.StatusCode != 503 {
		t.Fatalf("queue full: %d", full.resp.StatusCode)
	}
	if ra, err := strconv.Atoi(full.resp.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", full.resp.Header.Get("Retry-After"))
	}
	for _, r := range []started{a, b, c} {
		if r.resp.StatusCode != 200 {
			t.Fatalf("admitted request: %d", r.resp.StatusCode)
		}
		g.release <- struct{}{}
		got := readStream(t, r.resp.Body)
		if len(got.lines) != 3 || got.last["summary"] == nil {
			t.Errorf("stream: %d lines, last %v", len(got.lines), got.last)
		}
	}
	if st := s.Status(); st.Queue.Length != 0 || st.Running != nil {
		t.Errorf("after: %+v", st)
	}
}

// TestQueueZero: with --queue 0 a request is refused while one runs.
func TestQueueZero(t *testing.T) {
	g := newGate()
	ts := httptest.NewServer(newGatedServer(t, g, serve.Options{}).Handler())
	defer ts.Close()
	js, st := files(t, population(t, t.TempDir(), 1, 2))
	a := post(t, ts.URL, "?limit=5", js, st)
	<-g.started
	if b := post(t, ts.URL, "?limit=5", js, st); b.resp.StatusCode != 503 || b.resp.Header.Get("Retry-After") != "1" {
		t.Errorf("%d, Retry-After %q", b.resp.StatusCode, b.resp.Header.Get("Retry-After"))
	}
	g.release <- struct{}{}
	readStream(t, a.resp.Body)
}

// TestDisconnectCancels: a client that goes away cancels its running
// evaluation, and a waiting one leaves the queue; the service goes on.
func TestDisconnectCancels(t *testing.T) {
	g := newGate()
	var logged logBuffer
	s := newGatedServer(t, g, serve.Options{Queue: 1, Logger: logged.logger()})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	js, st := files(t, population(t, t.TempDir(), 2, 4))

	a := post(t, ts.URL, "?limit=10", js, st)
	<-g.started
	b := post(t, ts.URL, "?limit=10", js, st)
	waitFor(t, "b to wait", func() bool { return s.Status().Queue.Length == 1 })
	b.cancel() // b goes away while it waits
	waitFor(t, "b to leave the queue", func() bool { return s.Status().Queue.Length == 0 })
	a.cancel() // a goes away while it runs
	select {
	case <-g.canceled:
	case <-time.After(20 * time.Second):
		t.Fatal("the running evaluation was not cancelled")
	}
	waitFor(t, "a to stop", func() bool { return s.Status().Running == nil })

	c := post(t, ts.URL, "?limit=10", js, st)
	g.release <- struct{}{}
	if got := readStream(t, c.resp.Body); len(got.lines) != 2 {
		t.Errorf("after the cancellations: %d lines", len(got.lines))
	}
	if m := scrape(t, ts.URL); !strings.Contains(m, `neateval_evaluations_total{outcome="cancelled"} 2`) {
		t.Errorf("metrics:\n%s", m)
	}
	var gone int
	for _, e := range logged.events() {
		if e["event"] == "request" && e["status"] == 499.0 && e["cancelled"] == true {
			gone++
		}
	}
	if gone != 2 {
		t.Errorf("%d request lines with status 499, want 2:\n%s", gone, logged.String())
	}
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// logBuffer collects a logger's JSON lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *zerolog.Logger {
	l := zerolog.New(b)
	return &l
}

func (b *logBuffer) events() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
