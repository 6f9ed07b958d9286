package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
)

// The media types POST /v1/evaluate takes.
const (
	typeMultipart = "multipart/form-data"
	typeJSON      = "application/json"
)

// evalRequest is a parsed POST /v1/evaluate: the population, its digest
// (the results file's, for the run id) and the options, "" when not given.
type evalRequest struct {
	pop     *neat.Population
	digest  string
	limit   string
	fitness string
}

// mediaType is the request's media type, lowercased, or a 415 when it is
// neither form.
func mediaType(r *http.Request) (string, *httpError) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == typeMultipart || mt == typeJSON) {
		return mt, nil
	}
	return "", errorf(http.StatusUnsupportedMediaType, "content type %q, want %s or %s", ct, typeMultipart, typeJSON)
}

// parseRequest reads and checks a POST /v1/evaluate: the content type, the
// body of either form and the options. Its body should be limited
// (http.MaxBytesReader) to maxBody, the size the 413 names. allow are the
// folders of the path form.
func parseRequest(r *http.Request, allow []string, maxBody int64) (*evalRequest, *httpError) {
	mt, herr := mediaType(r)
	if herr != nil {
		return nil, herr
	}
	var req *evalRequest
	if mt == typeMultipart {
		req, herr = parseMultipart(r, maxBody)
	} else {
		req, herr = parsePathForm(r, allow, maxBody)
	}
	if herr != nil {
		return nil, herr
	}
	if herr := req.mergeQuery(r); herr != nil {
		return nil, herr
	}
	if herr := checkOptions(req.limit, req.fitness); herr != nil {
		return nil, herr
	}
	return req, nil
}

// mergeQuery adds the query's options to those of the body; one given in
// both with different values is refused, as is an unknown parameter.
func (req *evalRequest) mergeQuery(r *http.Request) *httpError {
	for k, vs := range r.URL.Query() {
		var dst *string
		switch k {
		case "limit":
			dst = &req.limit
		case "fitness":
			dst = &req.fitness
		default:
			return errorf(http.StatusBadRequest, "unknown query parameter %q", k)
		}
		for _, v := range vs {
			if v == "" {
				return emptyOption(k)
			}
			if *dst != "" && *dst != v {
				return errorf(http.StatusBadRequest, "%s given twice with different values (%q and %q)", k, *dst, v)
			}
			*dst = v
		}
	}
	return nil
}

// emptyOption is the refusal of an option given without a value.
func emptyOption(name string) *httpError {
	if name == "limit" {
		return errorf(http.StatusBadRequest, "limit %q: want an integer ≥ 0", "")
	}
	return errorf(http.StatusBadRequest, "fitness %q: want %q or %q", "", config.FitnessAccuracy, config.FitnessNegLoss)
}

// checkOptions checks the options' values.
func checkOptions(limit, fitness string) *httpError {
	if limit != "" {
		if _, err := parseLimit(limit); err != nil {
			return badRequest(err)
		}
	}
	if fitness != "" && fitness != config.FitnessAccuracy && fitness != config.FitnessNegLoss {
		return errorf(http.StatusBadRequest, "fitness %q: want %q or %q", fitness, config.FitnessAccuracy, config.FitnessNegLoss)
	}
	return nil
}

// parseLimit reads the limit option: a decimal integer ≥ 0.
func parseLimit(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("limit %q: want an integer ≥ 0", s)
	}
	return n, nil
}

// maxField is the longest text part (limit, fitness) read.
const maxField = 64

// parseMultipart reads form 1: the population and weights parts and the
// option fields.
func parseMultipart(r *http.Request, maxBody int64) (*evalRequest, *httpError) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "multipart body: %v", err)
	}
	parts := map[string][]byte{}
	names := map[string]string{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bodyError(err, maxBody)
		}
		name, herr := partName(p, parts)
		if herr != nil {
			return nil, herr
		}
		data, err := readPart(p, name)
		if err != nil {
			return nil, bodyError(err, maxBody)
		}
		if len(data) == 0 && (name == "limit" || name == "fitness") {
			return nil, emptyOption(name)
		}
		parts[name], names[name] = data, p.FileName()
		if names[name] == "" {
			names[name] = name
		}
	}
	for _, need := range []string{"population", "weights"} {
		if _, ok := parts[need]; !ok {
			return nil, errorf(http.StatusBadRequest, "missing part %q", need)
		}
	}
	pop, digest, err := neat.Parse(parts["population"], parts["weights"], names["population"], names["weights"])
	if err != nil {
		return nil, badRequest(err)
	}
	return &evalRequest{pop: pop, digest: digest, limit: string(parts["limit"]), fitness: string(parts["fitness"])}, nil
}

// partName is a part's form name, refused when unknown or seen before.
func partName(p *multipart.Part, seen map[string][]byte) (string, *httpError) {
	name := p.FormName()
	switch name {
	case "population", "weights", "limit", "fitness":
	default:
		return "", errorf(http.StatusBadRequest, "unknown part %q", name)
	}
	if _, dup := seen[name]; dup {
		return "", errorf(http.StatusBadRequest, "part %q given twice", name)
	}
	return name, nil
}

// readPart reads a part whole; a text field is cut at maxField bytes (a
// longer one is not a valid option anyway).
func readPart(p *multipart.Part, name string) ([]byte, error) {
	if name == "limit" || name == "fitness" {
		data, err := io.ReadAll(io.LimitReader(p, maxField))
		if err == nil {
			_, err = io.Copy(io.Discard, p)
		}
		return data, err
	}
	return io.ReadAll(p)
}

// pathForm is the JSON body of form 2.
type pathForm struct {
	Path    *string      `json:"path"`
	Limit   *json.Number `json:"limit"`
	Fitness *string      `json:"fitness"`
}

// parsePathForm reads form 2: a population file under an allowed folder.
func parsePathForm(r *http.Request, allow []string, maxBody int64) (*evalRequest, *httpError) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err, maxBody)
	}
	var f pathForm
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, errorf(http.StatusBadRequest, "request body: %v", err)
	}
	if dec.More() {
		return nil, errorf(http.StatusBadRequest, "request body: more than one JSON value")
	}
	if f.Path == nil || *f.Path == "" {
		return nil, errorf(http.StatusBadRequest, `request body: missing "path"`)
	}
	req := &evalRequest{}
	if f.Limit != nil {
		req.limit = f.Limit.String()
	}
	if f.Fitness != nil {
		if *f.Fitness == "" {
			return nil, emptyOption("fitness")
		}
		req.fitness = *f.Fitness
	}
	if herr := checkOptions(req.limit, req.fitness); herr != nil {
		return nil, herr // before touching the disk
	}
	var herr *httpError
	req.pop, req.digest, herr = loadAllowed(*f.Path, allow)
	return req, herr
}
