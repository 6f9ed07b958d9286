package serve

// The events the service logs (the "event" field), and their field keys.
// They are part of the log schema (docs/log-events.md): stable, lowercase.
// The data set and the device are logged by package run (dataset_loaded,
// device), as `neateval run` logs them.
const (
	// EventServeListening: the service listens; addr is the address
	// actually bound (port 0 resolved).
	EventServeListening = "serve_listening"
	// EventRequest: one line per request answered.
	EventRequest = "request"
	// EventServeStopping: a signal arrived; the service stops accepting.
	EventServeStopping = "serve_stopping"
	// EventServeStopped: the service stopped; outcome says what became of
	// the running evaluation.
	EventServeStopped = "serve_stopped"
)

// Field keys of the service's events.
const (
	KeyEvent     = "event"
	KeyAddr      = "addr"
	KeyTLS       = "tls"
	KeyAuth      = "auth"
	KeyQueue     = "queue"
	KeyAllowDirs = "allow_dirs"
	KeyMethod    = "method"
	KeyPath      = "path"
	KeyStatus    = "status"
	KeySeconds   = "seconds"
	KeyGenomes   = "genomes"
	KeyFailed    = "failed"
	KeyCancelled = "cancelled"
	KeyRun       = "run"
	KeyGrace     = "grace"
	KeyOutcome   = "outcome"
)

// The outcomes of serve_stopped.
const (
	OutcomeIdle      = "idle"      // nothing was running
	OutcomeFinished  = "finished"  // the running evaluation finished within the grace period
	OutcomeCancelled = "cancelled" // the running evaluation was cancelled
)
