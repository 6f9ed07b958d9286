//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"runtime"
	"sync"
)

// errWorkerClosed is returned for work handed to a stopped worker.
var errWorkerClosed = errors.New("cuda: the backend is closed")

// worker is the goroutine that makes every driver call of one CUDA context:
// a context is current on one OS thread, and the driver API's per-thread
// state (the current context, the last error) stays with it. Work arrives
// as closures; do waits for its closure's result.
//
// Closures run one at a time and must not call do themselves (they run on
// the worker already), nor block on anything another closure would have to
// release.
type worker struct {
	jobs     chan job
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

type job struct {
	f     func() error
	reply chan error
}

// startWorker starts the worker and runs setup on it first (creating the
// context, which makes it current on the worker's thread). If setup fails
// the worker stops and the error is returned.
func startWorker(setup func() error) (*worker, error) {
	w := &worker{jobs: make(chan job), quit: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan error, 1)
	go w.run(setup, ready)
	if err := <-ready; err != nil {
		<-w.done
		return nil, err
	}
	return w, nil
}

func (w *worker) run(setup func() error, ready chan<- error) {
	// The thread stays locked until the goroutine exits: the OS thread,
	// with the context current on it, is then ended rather than reused.
	runtime.LockOSThread()
	defer close(w.done)
	if err := setup(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for {
		select {
		case j := <-w.jobs:
			j.reply <- j.f()
		case <-w.quit:
			return
		}
	}
}

// do runs f on the worker and returns its error.
func (w *worker) do(f func() error) error {
	reply := make(chan error, 1)
	select {
	case w.jobs <- job{f: f, reply: reply}:
	case <-w.done:
		return errWorkerClosed
	}
	return <-reply
}

// stop runs last on the worker (destroying the context) and ends it.
// Stopping a stopped worker does nothing.
func (w *worker) stop(last func() error) error {
	var err error
	w.stopOnce.Do(func() {
		err = w.do(last)
		close(w.quit)
		<-w.done
	})
	if errors.Is(err, errWorkerClosed) {
		return nil
	}
	return err
}
