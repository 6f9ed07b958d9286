package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer written from the serving goroutine and
// read from the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServeRefusals(t *testing.T) {
	t.Setenv("NEATEVAL_TOKEN", "")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, 2, `address "0.0.0.0:0": an address that is not loopback needs a bearer token`},
		{[]string{"serve", "--queue", "-1", "--dataset-kind", "synthetic"}, 1, "queue -1: want 0 or more"},
		{[]string{"serve", "--token-file", "/nonexistent/token"}, 1, "token file: open /nonexistent/token"},
		{[]string{"serve", "--max-body", "lots"}, 2, "serve: invalid value"},
		{[]string{"help", "serve"}, 0, ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := runMain(context.Background(), tt.args, &stdout, &stderr)
		if code := exitCode(err); code != tt.code || (tt.msg != "" && !strings.HasPrefix(message(err), tt.msg)) {
			t.Errorf("%v: exit %d, %v; want %d %q", tt.args, code, err, tt.code, tt.msg)
		}
	}
}

// TestServeStartsAndStops: the command serves on loopback until its
// context ends (SIGTERM), then returns nil (exit 0).
func TestServeStartsAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runMain(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--dataset-kind", "synthetic", "--log-format", "json"}, &bytes.Buffer{}, &stderr)
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), `"event":"serve_listening"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no serve_listening line:\n%s", stderr.String())
		}
	}
	cancel()
	if err := <-done; err != nil || !strings.Contains(stderr.String(), `"outcome":"idle"`) {
		t.Errorf("serve: %v\n%s", err, stderr.String())
	}
}
