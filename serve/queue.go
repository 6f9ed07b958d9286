package serve

import (
	"context"
	"slices"
	"sync"
)

// queue hands the device to one evaluation at a time, in the order the
// requests asked for it, with at most capacity requests waiting.
//
// A request takes a place with admit (before its body is read), then
// either gives it up with leave (refused) or waits for its turn with wait
// (which gives the place up when the turn comes or ctx ends); the one
// whose turn came calls release when its evaluation is done.
type queue struct {
	mu       sync.Mutex
	capacity int
	busy     bool            // an evaluation has the device
	places   int             // requests admitted and not started
	waiters  []chan struct{} // in the order they called wait
}

func newQueue(capacity int) *queue { return &queue{capacity: capacity} }

// admit takes a place, or says false when the one running and capacity
// waiting fill the queue.
func (q *queue) admit() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	held := q.places
	if q.busy {
		held++
	}
	if held >= q.capacity+1 {
		return false
	}
	q.places++
	return true
}

// leave gives up an admitted request's place without waiting.
func (q *queue) leave() {
	q.mu.Lock()
	q.places--
	q.mu.Unlock()
}

// wait blocks until the admitted request's turn, or until ctx ends (its
// error is returned, and the place given up).
func (q *queue) wait(ctx context.Context) error {
	q.mu.Lock()
	if !q.busy && len(q.waiters) == 0 {
		q.busy = true
		q.places--
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-ch: // the turn came meanwhile: hand it on
		q.releaseLocked()
	default:
		q.waiters = slices.DeleteFunc(q.waiters, func(c chan struct{}) bool { return c == ch })
		q.places--
	}
	return ctx.Err()
}

// release ends the running evaluation's turn and starts the next one's.
func (q *queue) release() {
	q.mu.Lock()
	q.releaseLocked()
	q.mu.Unlock()
}

func (q *queue) releaseLocked() {
	q.busy = false
	if len(q.waiters) == 0 {
		return
	}
	next := q.waiters[0]
	q.waiters = q.waiters[1:]
	q.busy = true
	q.places--
	close(next)
}

// length is the requests admitted and not started.
func (q *queue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.places
}
