//go:build cuda

package cuda

// This file holds only the callback the driver calls: a file with an
// //export may declare, not define, C functions in its preamble.

// #include <stdint.h>
import "C"

import "runtime/cgo"

// neatevalStreamDone runs on a driver thread when a stream reaches a host
// function that cOnDone enqueued: it calls the Go function the handle
// holds, once.
//
//export neatevalStreamDone
func neatevalStreamDone(h C.uintptr_t) {
	hd := cgo.Handle(h)
	f := hd.Value().(func())
	hd.Delete()
	f()
}
