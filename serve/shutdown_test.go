package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/neateval/neateval/serve"
)

// TestShutdownCancels: stopped with no grace, the running evaluation is
// cancelled (its stream ends with an error line), so is a waiting one, and
// serve_stopped says so.
func TestShutdownCancels(t *testing.T) {
	g := newGate()
	var logged logBuffer
	s := newGatedServer(t, g, serve.Options{Queue: 1, Logger: logged.logger()})
	addr, stop := serveOn(t, s)
	js, st := files(t, population(t, t.TempDir(), 2, 6))
	a := post(t, "http://"+addr, "?limit=10", js, st)
	<-g.started
	b := post(t, "http://"+addr, "?limit=10", js, st)
	waitFor(t, "b to wait", func() bool { return s.Status().Queue.Length == 1 })
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, r := range []started{a, b} {
		got := readStream(t, r.resp.Body)
		if got.last["error"] != "cancelled: the service is shutting down" {
			t.Errorf("last line %v", got.last)
		}
	}
	if !strings.Contains(logged.String(), `"event":"serve_stopped","outcome":"cancelled"`) {
		t.Errorf("log:\n%s", logged.String())
	}
}

// TestShutdownFinishes: within the grace period the running evaluation
// finishes and its client gets every line.
func TestShutdownFinishes(t *testing.T) {
	g := newGate()
	var logged logBuffer
	s := newGatedServer(t, g, serve.Options{Grace: time.Minute, Logger: logged.logger()})
	addr, stop := serveOn(t, s)
	js, st := files(t, population(t, t.TempDir(), 2, 6))
	a := post(t, "http://"+addr, "?limit=10", js, st)
	<-g.started
	done := make(chan error)
	go func() { done <- stop() }()
	waitFor(t, "the shutdown to begin", func() bool { return strings.Contains(logged.String(), "serve_stopping") })
	g.release <- struct{}{}
	if got := readStream(t, a.resp.Body); len(got.lines) != 2 || got.last["summary"] == nil {
		t.Errorf("%d lines, last %v", len(got.lines), got.last)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !strings.Contains(logged.String(), `"event":"serve_stopped","outcome":"finished"`) {
		t.Errorf("log:\n%s", logged.String())
	}
}
