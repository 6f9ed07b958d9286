package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// httpError is a refusal: the status and the message of its body.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) *httpError {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badRequest is a 400 with err's message.
func badRequest(err error) *httpError {
	return &httpError{status: http.StatusBadRequest, msg: err.Error()}
}

// bodyError is the refusal of a body that could not be read: 413 when it
// passed the size limit, else 400.
func bodyError(err error, maxBody int64) *httpError {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return tooLarge(maxBody)
	}
	return errorf(http.StatusBadRequest, "reading the body: %v", err)
}

func tooLarge(maxBody int64) *httpError {
	return errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes (--max-body)", maxBody)
}

// errorBody is the JSON body of every refusal, and the last line of a
// stream that failed.
type errorBody struct {
	Error string `json:"error"`
}

// writeError answers e: its status, and {"error": msg} as JSON.
func writeError(w http.ResponseWriter, e *httpError) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	writeJSONLine(w, errorBody{Error: e.msg})
}

// writeJSONLine writes v as one JSON line, without HTML escaping.
func writeJSONLine(w http.ResponseWriter, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// retryAfter is the Retry-After value of a 503: whole seconds, at least 1.
func retryAfter(seconds float64) string {
	s := int(seconds + 0.999)
	return strconv.Itoa(max(s, 1))
}
