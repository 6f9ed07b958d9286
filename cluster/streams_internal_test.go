package cluster

import (
	"context"
	"errors"
	"testing"
)

// settle tries again until do succeeds, settleTries times at most, and
// not after ctx is done.
func TestSettle(t *testing.T) {
	refused := errors.New("error creating store for stream")
	tests := []struct {
		name      string
		failures  int // calls that fail before one succeeds
		cancelled bool
		wantCalls int
		wantErr   error
	}{
		{"at once", 0, false, 1, nil},
		{"after two refusals", 2, false, 3, nil},
		{"refused every time", 100, false, settleTries, refused},
		{"ctx done", 100, true, 1, refused},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancel(context.Background())
		if tt.cancelled {
			cancel()
		}
		calls := 0
		err := settle(ctx, func() error {
			calls++
			if calls <= tt.failures {
				return refused
			}
			return nil
		})
		cancel()
		if calls != tt.wantCalls || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("%s: %d calls, %v; want %d calls, %v", tt.name, calls, err, tt.wantCalls, tt.wantErr)
		}
	}
}
