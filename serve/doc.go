// Package serve is neateval's scoring service: an HTTP API
// (docs/http-api.md) that scores the populations clients send, on a
// backend, a device and a data set opened once for the life of the
// process, so that an evolution loop in another language pays the start-up
// and the data set's load once, not every generation.
//
// New opens what a config describes (as `neateval run` does) and keeps one
// scorer, an *evaluator.Evaluator with the data set cached on the device,
// for the config's default limit; a request that asks for another limit
// (the first N images) gets a scorer of its own, kept until a request asks
// for yet another. Requests are scored one at a time, from a bounded FIFO
// queue: one evaluation has the whole device, Options.Queue more may wait,
// and a request beyond that is refused at once (503, Retry-After).
//
// POST /v1/evaluate takes the population as multipart/form-data (the JSON
// and the safetensors files) or, when the operator allowed folders
// (Options.AllowDirs), as a path under one of them. It answers with an
// NDJSON stream: one line per genome as its chunk finishes, each exactly
// the line `neateval run` writes in its results file for the same files
// (run id included; "seconds" aside), then a summary line. A client that
// disconnects cancels its evaluation. Bad input gets the message
// `neateval run` gives for it with a 4xx status; a malformed genome is not
// bad input but a result line with its error, as in a results file.
//
// GET /v1/health, GET /v1/status and GET /metrics (Prometheus, on a
// registry of the server's own) tell how it goes.
//
// # Security
//
// The service listens on loopback unless told otherwise; on any other
// address it needs a bearer token (Options.Token) and New refuses to start
// without one (ErrTokenRequired). The token is compared in constant time
// and never logged. With Options.TLSCert and TLSKey it speaks HTTPS.
//
// # Shutdown
//
// Serve runs until its context is cancelled (SIGTERM in the command), then
// stops accepting, ends the waiting requests' streams, lets the running
// evaluation finish within Options.Grace or cancels it, and logs which
// (serve_stopped, outcome).
//
// # Other scorers
//
// The server scores through the evaluator.Scorer interface:
// Options.NewScorer replaces the evaluator on the local device by any
// scorer of a data set, such as a coordinator of a cluster of workers, with
// the same API in front.
package serve
