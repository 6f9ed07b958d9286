package neat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// ParsePopulationJSON parses the JSON part of a population file, data, whose
// name (for messages) is name. It returns the population, whose genomes have
// no Params yet, and the "weights" field as written.
//
// A problem with the whole file is an error naming the file and the key or
// byte offset. A problem within one genome does not stop the parse: it is
// kept in that genome's Invalid (structure: output, nodes, node ids, inputs)
// or in a node's Problem (the op's fields, judged only if the node is
// reachable), and the other genomes are parsed as usual.
func ParsePopulationJSON(data []byte, name string) (*Population, string, error) {
	pop, weights, err := parsePopulation(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return pop, weights, nil
}

func parsePopulation(data []byte) (*Population, string, error) {
	if !json.Valid(data) {
		return nil, "", syntaxError(data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, "", notJSON(err, dec)
	}
	if tok != json.Delim('{') {
		return nil, "", fmt.Errorf("not a population: the top level is not a JSON object")
	}
	pop := &Population{}
	var format, weights json.RawMessage
	var input, classes json.RawMessage
	sawGenomes := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", notJSON(err, dec)
		}
		key := tok.(string) // object keys are strings
		if key == "genomes" {
			if pop.Genomes, err = parseGenomes(dec, data); err != nil {
				return nil, "", err
			}
			sawGenomes = true
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, "", notJSON(err, dec)
		}
		switch key {
		case "format":
			format = raw
		case "weights":
			weights = raw
		case "input":
			input = raw
		case "num_classes":
			classes = raw
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, "", notJSON(err, dec)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", fmt.Errorf("byte %d: data after the top-level object", dec.InputOffset())
	}

	if format == nil {
		return nil, "", fmt.Errorf("format is missing (want %q)", FormatV1)
	}
	if f, err := stringField(format); err != nil || f != FormatV1 {
		return nil, "", fmt.Errorf("format %s, want %q", describe(format), FormatV1)
	}
	if pop.Input, err = parseInput(input); err != nil {
		return nil, "", err
	}
	if classes == nil {
		return nil, "", fmt.Errorf("num_classes is missing")
	}
	nc, err := intField(classes)
	if err == nil && (nc < 1 || nc > MaxSize) {
		err = fmt.Errorf("%d, want 1 to %d", nc, MaxSize)
	}
	if err != nil {
		return nil, "", fmt.Errorf("num_classes: %w", err)
	}
	pop.NumClasses = int(nc)
	if weights == nil {
		return nil, "", fmt.Errorf("weights is missing (the name of the safetensors file)")
	}
	w, err := stringField(weights)
	if err == nil && w == "" {
		err = errors.New("empty string, want a file name")
	}
	if err != nil {
		return nil, "", fmt.Errorf("weights: %w", err)
	}
	if !sawGenomes {
		return nil, "", fmt.Errorf("genomes is missing")
	}
	if len(pop.Genomes) == 0 {
		return nil, "", fmt.Errorf("genomes is empty")
	}
	return pop, w, nil
}

// syntaxError locates the syntax error of data, which is not valid JSON.
func syntaxError(data []byte) error {
	err := json.Unmarshal(data, new(json.RawMessage))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	at := se.Offset - 1 // the offset is past the offending byte...
	if strings.HasPrefix(se.Error(), "unexpected end") {
		at = se.Offset // ...or the end of the data
	}
	return fmt.Errorf("not valid JSON at byte %d: %w", at, err)
}

// notJSON reports a decoding error. The data was checked to be valid JSON
// first, so this is not expected.
func notJSON(err error, dec *json.Decoder) error {
	return fmt.Errorf("reading JSON at byte %d: %w", dec.InputOffset(), err)
}

func parseInput(raw json.RawMessage) (Input, error) {
	if raw == nil {
		return Input{}, fmt.Errorf("input is missing")
	}
	var obj map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &obj) != nil {
		return Input{}, fmt.Errorf("input: want an object {\"channels\", \"height\", \"width\"}, got %s", describe(raw))
	}
	var in Input
	for _, f := range []struct {
		key string
		dst *int
	}{{"channels", &in.Channels}, {"height", &in.Height}, {"width", &in.Width}} {
		v, ok := obj[f.key]
		if !ok {
			return Input{}, fmt.Errorf("input.%s is missing", f.key)
		}
		n, err := intField(v)
		if err == nil && (n < 1 || n > MaxSize) {
			err = fmt.Errorf("%d, want 1 to %d", n, MaxSize)
		}
		if err != nil {
			return Input{}, fmt.Errorf("input.%s: %w", f.key, err)
		}
		*f.dst = int(n)
	}
	if !sizeOK(Shape{C: in.Channels, H: in.Height, W: in.Width}) {
		return Input{}, fmt.Errorf("input %d×%d×%d has more than %d elements", in.Channels, in.Height, in.Width, MaxSize)
	}
	return in, nil
}

// parseGenomes reads the "genomes" array from dec. Each genome is decoded on
// its own, so that a genome's problems stay with that genome; only a genome
// without a usable id, or a duplicate id, fails the file, the first such
// genome in file order. The genomes are parsed on all cores (parseAll):
// 10,000 of them took 0.6 s on one.
func parseGenomes(dec *json.Decoder, data []byte) ([]*Genome, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, notJSON(err, dec)
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("genomes: want an array, got %v", tok)
	}
	var raws []json.RawMessage
	var at []int64
	for dec.More() {
		at = append(at, valueStart(data, dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, notJSON(err, dec)
		}
		raws = append(raws, raw)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, notJSON(err, dec)
	}
	genomes, errs := parseAll(raws)
	seen := make(map[int64]int, len(genomes))
	for i, g := range genomes {
		if errs[i] != nil {
			return nil, fmt.Errorf("genome #%d (byte %d): %w", i, at[i], errs[i])
		}
		if j, dup := seen[g.ID]; dup {
			return nil, fmt.Errorf("genome #%d (byte %d): id %d is already genome #%d's", i, at[i], g.ID, j)
		}
		seen[g.ID] = i
	}
	return genomes, nil
}

// parseAll parses each raw genome, in parallel on GOMAXPROCS goroutines
// taking genomes from a shared counter; genome i and its error are at i.
func parseAll(raws []json.RawMessage) ([]*Genome, []error) {
	genomes, errs := make([]*Genome, len(raws)), make([]error, len(raws))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(raws)/64, 1)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(raws) {
					return
				}
				genomes[i], errs[i] = parseGenome(raws[i])
			}
		})
	}
	wg.Wait()
	return genomes, errs
}

// valueStart is the offset of the next value at or after off: past the
// whitespace and the comma that the decoder has not consumed yet.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// parseGenome parses one genome. The error is for the whole file (no usable
// id); everything else is kept in the genome.
func parseGenome(raw json.RawMessage) (*Genome, error) {
	var obj map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, fmt.Errorf("want a JSON object, got %s", describe(raw))
	}
	idRaw, ok := obj["id"]
	if !ok {
		return nil, errors.New("id is missing")
	}
	id, err := intField(idRaw)
	if err != nil || id < 0 {
		return nil, fmt.Errorf("id must be a non-negative integer, got %s", describe(idRaw))
	}
	g := &Genome{ID: id, Params: map[int]*Params{}}
	g.Invalid = parseGenomeBody(g, obj)
	return g, nil
}

// parseGenomeBody fills g's output and nodes. It returns the first
// structural problem, as a *GenomeError, or nil.
func parseGenomeBody(g *Genome, obj map[string]json.RawMessage) error {
	out, ok := obj["output"]
	if !ok {
		return genomeErr(g.ID, 0, "output is missing")
	}
	o, err := nodeID(out)
	if err != nil {
		return genomeErr(g.ID, 0, "output: %v", err)
	}
	g.Output = o
	nodesRaw, ok := obj["nodes"]
	if !ok {
		return genomeErr(g.ID, 0, "nodes is missing")
	}
	var nodes []json.RawMessage
	if firstByte(nodesRaw) != '[' || json.Unmarshal(nodesRaw, &nodes) != nil {
		return genomeErr(g.ID, 0, "nodes: want an array, got %s", describe(nodesRaw))
	}
	g.Nodes = make([]Node, len(nodes))
	for i, nr := range nodes {
		if err := parseNode(&g.Nodes[i], nr); err != nil {
			if g.Nodes[i].ID == 0 {
				return genomeErr(g.ID, 0, "node #%d: %v", i, err)
			}
			return genomeErr(g.ID, g.Nodes[i].ID, "%v", err)
		}
	}
	return nil
}

// parseNode parses one node. The error is structural (not an object, a bad
// id or inputs); a problem with the op's fields goes to n.Problem.
func parseNode(n *Node, raw json.RawMessage) error {
	var obj map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &obj) != nil {
		return fmt.Errorf("want a JSON object, got %s", describe(raw))
	}
	idRaw, ok := obj["id"]
	if !ok {
		return errors.New("id is missing")
	}
	id, err := nodeID(idRaw)
	if err != nil {
		return fmt.Errorf("id: %v", err)
	}
	n.ID = id
	inRaw, ok := obj["inputs"]
	if !ok {
		return errors.New("inputs is missing")
	}
	var ins []json.RawMessage
	if firstByte(inRaw) != '[' || json.Unmarshal(inRaw, &ins) != nil {
		return fmt.Errorf("inputs: want an array of node ids, got %s", describe(inRaw))
	}
	n.Inputs = make([]int, len(ins))
	for j, r := range ins {
		if n.Inputs[j], err = nodeID(r); err != nil {
			return fmt.Errorf("inputs[%d]: %v", j, err)
		}
	}
	n.Problem = parseFields(n, obj)
	return nil
}

// nodeID parses a node id: any integer that fits an int (Compile judges the
// sign).
func nodeID(raw json.RawMessage) (int, error) {
	v, err := intField(raw)
	if err == nil && (v < -MaxSize || v > MaxSize) {
		err = fmt.Errorf("%d is out of range", v)
	}
	return int(v), err
}

// nodeFields are the fields of each op: required ones, then optional ones.
var nodeFields = map[Op]struct{ required, optional []string }{
	OpConv2D:        {[]string{"out_channels", "kernel"}, []string{"stride", "padding", "activation"}},
	OpMaxPool2D:     {[]string{"kernel"}, []string{"stride"}},
	OpAvgPool2D:     {[]string{"kernel"}, []string{"stride"}},
	OpGlobalAvgPool: {},
	OpDense:         {[]string{"out_features"}, []string{"activation"}},
}

// parseFields reads the op and the fields that op uses, and merge when the
// node has several inputs; it returns the first problem, or "". Fields the op
// does not use are ignored, as the format ignores unknown ones.
func parseFields(n *Node, obj map[string]json.RawMessage) string {
	if len(n.Inputs) > 1 {
		if raw, ok := obj["merge"]; ok {
			s, err := stringField(raw)
			if err != nil {
				return fmt.Sprintf("merge: %v", err)
			}
			n.Merge = Merge(s)
		}
	}
	opRaw, ok := obj["op"]
	if !ok {
		return "op is missing"
	}
	op, err := stringField(opRaw)
	if err != nil {
		return fmt.Sprintf("op: %v", err)
	}
	n.Op = Op(op)
	if n.Op == OpConv2D {
		n.Padding = PaddingDefault
	}
	fields, known := nodeFields[n.Op]
	if !known {
		return "" // Compile reports the unknown op
	}
	for _, key := range fields.required {
		if _, ok := obj[key]; !ok {
			return fmt.Sprintf("%s %s is missing", n.Op, key)
		}
	}
	for _, key := range append(fields.required, fields.optional...) {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		if key == "activation" {
			s, err := stringField(raw)
			if err != nil {
				return fmt.Sprintf("%s activation: %v", n.Op, err)
			}
			n.Activation = Activation(s)
			continue
		}
		v, err := intField(raw)
		if err != nil {
			return fmt.Sprintf("%s %s: %v", n.Op, key, err)
		}
		// Ranges are checked here, not left to Compile, because an explicit
		// stride 0 or padding -1 would read as "the default" there.
		lo := int64(1)
		if key == "padding" {
			lo = 0
		}
		if v < lo {
			return fmt.Sprintf("%s %s %d, want ≥ %d", n.Op, key, v, lo)
		}
		if v > MaxSize {
			return fmt.Sprintf("%s %s %d, want ≤ %d", n.Op, key, v, MaxSize)
		}
		switch key {
		case "out_channels":
			n.OutChannels = int(v)
		case "out_features":
			n.OutFeatures = int(v)
		case "kernel":
			n.Kernel = int(v)
		case "stride":
			n.Stride = int(v)
		case "padding":
			n.Padding = int(v)
		}
	}
	return ""
}

// intField parses a JSON integer: an optional minus and digits, no fraction
// or exponent (3.0 and 3e0 are not integers here), no string, no boolean.
func intField(raw json.RawMessage) (int64, error) {
	s := bytes.TrimSpace(raw)
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	ok := len(digits) > 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			ok = false
			break
		}
	}
	if !ok {
		return 0, fmt.Errorf("want a JSON integer, got %s", describe(raw))
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("integer %s is out of range", describe(raw))
	}
	return v, nil
}

// stringField parses a JSON string.
func stringField(raw json.RawMessage) (string, error) {
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("want a JSON string, got %s", describe(raw))
	}
	return s, nil
}

// firstByte is the first byte of a JSON value, or 0 for none.
func firstByte(raw json.RawMessage) byte {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

// describe shows a JSON value in a message, shortened if long.
func describe(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) > 40 {
		cut := 37
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return string(s[:cut]) + "..."
	}
	return string(s)
}
