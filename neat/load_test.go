package neat_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

// popHeader starts every hand-written population: 1×8×8 inputs, 3 classes.
const popHeader = `{"format": "neateval.population/v1", "input": {"channels": 1, "height": 8, "width": 8},
 "num_classes": 3, "weights": "w.safetensors", "genomes": [`

// The nodes of a valid genome on popHeader's input: conv 1 → maxpool 2 →
// global_avg_pool 3 → dense 4 (the output).
var baseNodes = []string{
	`{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3}`,
	`{"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2}`,
	`{"id": 3, "op": "global_avg_pool", "inputs": [2]}`,
	`{"id": 4, "op": "dense", "inputs": [3], "out_features": 3}`,
}

// baseTensors are the weights of baseNodes for genome id, in F32.
func baseTensors(id int64) []stTensor {
	name := func(node int, kind string) string { return neat.TensorName(id, node, kind) }
	ramp := func(n int) []byte { return f32Bytes(tensor(n).Data...) }
	return []stTensor{
		{name(1, "weight"), "F32", []int{4, 1, 3, 3}, ramp(36)},
		{name(1, "bias"), "F32", []int{4}, ramp(4)},
		{name(4, "weight"), "F32", []int{3, 4}, ramp(12)},
		{name(4, "bias"), "F32", []int{3}, ramp(3)},
	}
}

// writePop writes a population JSON and its weights file into a new folder
// and returns the JSON's path.
func writePop(t *testing.T, json string, weights []byte) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "pop.json")
	if err := os.WriteFile(path, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	if weights != nil {
		if err := os.WriteFile(filepath.Join(dir, "w.safetensors"), weights, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestLoadGenomeProblems loads one population in which most genomes are
// broken, each in its own way: the load succeeds, each broken genome's
// Compile error names it and its node, and the valid ones compile.
func TestLoadGenomeProblems(t *testing.T) {
	type edit struct {
		nodes   []string // replaces baseNodes when not nil
		genome  string   // replaces the whole genome object when not ""
		tensors func(ts []stTensor) []stTensor
		want    string
	}
	with := func(i int, node string) []string {
		ns := append([]string(nil), baseNodes...)
		ns[i] = node
		return ns
	}
	nanWeight := f32Bytes(tensor(36).Data...)
	copy(nanWeight[8:], f32Bytes(float32(math.NaN())))
	edits := []edit{
		{want: ""},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": "3"}`),
			want: `genome 1, node 1: conv2d kernel: want a JSON integer, got "3"`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3.0}`),
			want: `genome 2, node 1: conv2d kernel: want a JSON integer, got 3.0`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": true}`),
			want: `genome 3, node 1: conv2d kernel: want a JSON integer, got true`},
		{nodes: with(0, `{"id": 1, "op": "conv3d", "inputs": [0], "out_channels": 4, "kernel": 3}`),
			want: `genome 4, node 1: unknown op "conv3d"`},
		{tensors: func(ts []stTensor) []stTensor { ts[0].dtype, ts[0].data = "I32", make([]byte, 144); return ts },
			want: `genome 5, node 1: conv2d weight dtype I32 (shape [4 1 3 3]), want F32, F16 or BF16`},
		{tensors: func(ts []stTensor) []stTensor { return ts[:2] },
			want: `genome 6, node 4: dense weight shape none, want [3 4]`},
		{tensors: func(ts []stTensor) []stTensor { ts[0].data = nanWeight; return ts },
			want: `genome 7, node 1: conv2d weight has a non-finite value (NaN) at flat index 2`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0, 2], "out_channels": 4, "kernel": 3}`),
			want: `genome 8, node 1: the graph has a cycle through this node`},
		{nodes: with(2, `{"id": 3, "op": "global_avg_pool", "inputs": [2, 1]}`),
			want: `genome 9, node 3: sum merge of inputs with different spatial sizes (input 2 is [B 4 4 4], input 1 is [B 4 8 8])`},
		{nodes: with(1, `{"id": 2, "op": "maxpool2d", "inputs": ["1"], "kernel": 2}`),
			want: `genome 10, node 2: inputs[0]: want a JSON integer, got "1"`},
		{nodes: append(append([]string(nil), baseNodes...), `5`),
			want: `genome 11: node #4: want a JSON object, got 5`},
		{genome: `{"id": 12, "nodes": [` + strings.Join(baseNodes, ",") + `]}`,
			want: `genome 12: output is missing`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3, "stride": 0}`),
			want: `genome 13, node 1: conv2d stride 0, want ≥ 1`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3, "padding": -1}`),
			want: `genome 14, node 1: conv2d padding -1, want ≥ 0`},
		{nodes: append(append([]string(nil), baseNodes...),
			`{"id": 9, "op": "conv2d", "inputs": [1], "out_channels": 4, "kernel": "x"}`,
			`{"id": 10, "op": "warp", "inputs": [9, 2]}`),
			tensors: func(ts []stTensor) []stTensor {
				return append(ts, stTensor{"g15.n9.weight", "I32", []int{2}, make([]byte, 8)},
					stTensor{"g15.n10.weight", "F32", []int{1}, f32Bytes(float32(math.Inf(1)))})
			},
			want: ""}, // the broken nodes are unreachable
		{genome: `{"id": 16, "fitness": 0.5, "output": 4, "nodes": [` +
			`{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3, "enabled": true, "Kernel": "x"},` +
			`{"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2, "out_channels": "x", "padding": 3, "activation": 0},` +
			`{"id": 3, "op": "global_avg_pool", "inputs": [2], "kernel": "x", "stride": []},` +
			`{"id": 4, "op": "dense", "inputs": [3], "out_features": 3, "kernel": 2.5}]}`,
			want: ""}, // unknown fields and fields the op does not use are ignored
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4}`),
			want: `genome 17, node 1: conv2d kernel is missing`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4e0, "kernel": 3}`),
			want: `genome 18, node 1: conv2d out_channels: want a JSON integer, got 4e0`},
		{nodes: with(0, `{"op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3}`),
			want: `genome 19: node #0: id is missing`},
		{nodes: with(1, `{"id": "2", "op": "maxpool2d", "inputs": [1], "kernel": 2}`),
			want: `genome 20: node #1: id: want a JSON integer, got "2"`},
		{nodes: with(0, `{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3, "activation": 5}`),
			want: `genome 21, node 1: conv2d activation: want a JSON string, got 5`},
		{nodes: with(2, `{"id": 3, "op": "global_avg_pool", "inputs": [2, 2], "merge": 1}`),
			want: `genome 22, node 3: merge: want a JSON string, got 1`},
		{nodes: with(1, `{"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2, "merge": 7}`),
			want: ""}, // merge is ignored on a node with one input
		{genome: `{"id": 24, "output": 4, "nodes": {}}`,
			want: `genome 24: nodes: want an array, got {}`},
		{tensors: func(ts []stTensor) []stTensor {
			ts[0].shape, ts[0].data = []int{4, 2, 3, 3}, make([]byte, 288)
			return ts
		}, want: `genome 25, node 1: conv2d weight shape [4 2 3 3], want [4 1 3 3]`},
		{nodes: with(3, `{"id": 4, "op": "dense", "inputs": [3], "out_features": 5}`),
			tensors: func(ts []stTensor) []stTensor {
				ts[2].shape, ts[2].data = []int{5, 4}, make([]byte, 80)
				ts[3].shape, ts[3].data = []int{5}, make([]byte, 20)
				return ts
			}, want: `genome 26, node 4: output shape [B 5], want [B 3]`},
		{nodes: with(1, `{"id": 2, "op": "maxpool2d", "kernel": 2}`),
			want: `genome 27, node 2: inputs is missing`},
		{nodes: append(append([]string(nil), baseNodes...), `{"id": 2, "op": "global_avg_pool", "inputs": [1]}`),
			want: `genome 28, node 2: duplicate node id`},
		{tensors: func(ts []stTensor) []stTensor {
			ts[0].dtype, ts[0].data = "F16", halfBytes(f16Bits, tensor(36).Data...)
			ts[2].dtype, ts[2].data = "BF16", halfBytes(bf16Bits, tensor(12).Data...)
			return ts
		}, want: ""},
		{nodes: with(3, `{"id": 4, "op": "dense", "inputs": [3, 77], "out_features": 3}`),
			want: `genome 30, node 4: input 77 does not exist`},
		{nodes: with(1, `{"id": 2, "op": 5, "inputs": [1], "kernel": 2}`),
			want: `genome 31, node 2: op: want a JSON string, got 5`},
		{nodes: with(1, `{"id": 2, "inputs": [1], "kernel": 2}`),
			want: `genome 32, node 2: op is missing`},
		{genome: `{"id": 33, "output": "4", "nodes": []}`,
			want: `genome 33: output: want a JSON integer, got "4"`},
	}
	var genomes []string
	var tensors []stTensor
	for i, e := range edits {
		id := int64(i)
		switch {
		case e.genome != "":
			genomes = append(genomes, e.genome)
		case e.nodes != nil:
			genomes = append(genomes, fmt.Sprintf(`{"id": %d, "output": 4, "nodes": [%s]}`, id, strings.Join(e.nodes, ",\n")))
		default:
			genomes = append(genomes, fmt.Sprintf(`{"id": %d, "output": 4, "nodes": [%s]}`, id, strings.Join(baseNodes, ",\n")))
		}
		ts := baseTensors(id)
		if e.tensors != nil {
			ts = e.tensors(ts)
		}
		tensors = append(tensors, ts...)
	}
	tensors = append(tensors, stTensor{"junk", "I64", []int{1}, make([]byte, 8)},
		stTensor{"g999.n1.weight", "U8", []int{3}, make([]byte, 3)})
	path := writePop(t, popHeader+strings.Join(genomes, ",\n")+"]}", encodeST(tensors...))
	pop, err := neat.Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(pop.Genomes) != len(edits) {
		t.Fatalf("%d genomes, want %d", len(pop.Genomes), len(edits))
	}
	for i, g := range pop.Genomes {
		if g.ID != int64(i) {
			t.Errorf("genome #%d has id %d", i, g.ID)
		}
		_, err := neat.Compile(g, pop.Input, pop.NumClasses)
		switch want := edits[i].want; {
		case want == "" && err != nil:
			t.Errorf("genome %d: %v, want valid", i, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("genome %d: error\n got %v\nwant %s", i, err, want)
		case err != nil:
			var ge *neat.GenomeError
			if !errors.As(err, &ge) || ge.Genome != int64(i) {
				t.Errorf("genome %d: error %#v is not a *GenomeError for it", i, err)
			}
		}
	}
	// The F16 and BF16 weights were converted.
	g29 := pop.Genomes[29]
	if w := g29.Params[1].Weight; w.DType != "F16" || w.Data[1] != f16Value(tensor(36).Data[1]) {
		t.Errorf("F16 weight read as %s %v", w.DType, w.Data[:2])
	}
	if w := g29.Params[4].Weight; w.DType != "BF16" || w.Data[1] != bf16Value(tensor(12).Data[1]) {
		t.Errorf("BF16 weight read as %s %v", w.DType, w.Data[:2])
	}
}

// f16Value and bf16Value are what a float32 becomes through F16 or BF16:
// the nearest value with 11 or 8 significant bits.
func f16Value(f float32) float32 {
	fr, exp := math.Frexp(float64(f))
	return float32(math.Ldexp(math.RoundToEven(fr*2048)/2048, exp))
}

func bf16Value(f float32) float32 {
	fr, exp := math.Frexp(float64(f))
	return float32(math.Ldexp(math.RoundToEven(fr*256)/256, exp))
}

func TestLoadFileErrors(t *testing.T) {
	valid := func(id int) string {
		return fmt.Sprintf(`{"id": %d, "output": 4, "nodes": [%s]}`, id, strings.Join(baseNodes, ","))
	}
	weights := encodeST(append(baseTensors(1), baseTensors(2)...)...)
	withHeader := func(h string) string {
		return `{"format": "neateval.population/v1", "input": {"channels": 1, "height": 8, "width": 8}, ` + h + `}`
	}
	rest := `"num_classes": 3, "weights": "w.safetensors", "genomes": [` + valid(1) + `]`
	cases := []struct {
		name    string
		json    string
		weights []byte
		want    string // {json} and {weights} stand for the paths; {N} for the byte offset of the text after the marker |
	}{
		{"not JSON", `{"format": nul}`, weights, `{json}: not valid JSON at byte 14: invalid character '}' in literal null (expecting 'l')`},
		{"truncated JSON", popHeader + valid(1), weights, `{json}: not valid JSON at byte 420: unexpected end of JSON input`},
		{"empty file", ``, weights, `{json}: not valid JSON at byte 0: unexpected end of JSON input`},
		{"top level an array", `[]`, weights, `{json}: not a population: the top level is not a JSON object`},
		{"wrong format", `{"format": "neateval.population/v2"}`, weights, `{json}: format "neateval.population/v2", want "neateval.population/v1"`},
		{"format a number", `{"format": 1}`, weights, `{json}: format 1, want "neateval.population/v1"`},
		{"no format", `{"genomes": []}`, weights, `{json}: format is missing (want "neateval.population/v1")`},
		{"no input", `{"format": "neateval.population/v1"}`, weights, `{json}: input is missing`},
		{"input an array", `{"format": "neateval.population/v1", "input": [1, 8, 8]}`, weights,
			`{json}: input: want an object {"channels", "height", "width"}, got [1, 8, 8]`},
		{"zero channels", `{"format": "neateval.population/v1", "input": {"channels": 0, "height": 8, "width": 8}}`, weights,
			`{json}: input.channels: 0, want 1 to 2147483648`},
		{"height a string", `{"format": "neateval.population/v1", "input": {"channels": 1, "height": "8", "width": 8}}`, weights,
			`{json}: input.height: want a JSON integer, got "8"`},
		{"width missing", `{"format": "neateval.population/v1", "input": {"channels": 1, "height": 8}}`, weights,
			`{json}: input.width is missing`},
		{"no num_classes", withHeader(`"genomes": []`), weights, `{json}: num_classes is missing`},
		{"num_classes 0", withHeader(`"num_classes": 0`), weights, `{json}: num_classes: 0, want 1 to 2147483648`},
		{"num_classes 10.5", withHeader(`"num_classes": 10.5`), weights, `{json}: num_classes: want a JSON integer, got 10.5`},
		{"no weights", withHeader(`"num_classes": 3`), weights, `{json}: weights is missing (the name of the safetensors file)`},
		{"weights a number", withHeader(`"num_classes": 3, "weights": 5`), weights, `{json}: weights: want a JSON string, got 5`},
		{"weights empty", withHeader(`"num_classes": 3, "weights": ""`), weights, `{json}: weights: empty string, want a file name`},
		{"no genomes", withHeader(`"num_classes": 3, "weights": "w.safetensors"`), weights, `{json}: genomes is missing`},
		{"no genome", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": []`), weights, `{json}: genomes is empty`},
		{"genomes an object", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": {}`), weights,
			`{json}: genomes: want an array, got {`},
		{"genome a number", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [` + valid(1) + `, |5]`), weights,
			`{json}: genome #1 (byte {N}): want a JSON object, got 5`},
		{"genome id missing", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [|{"output": 4, "nodes": []}]`), weights,
			`{json}: genome #0 (byte {N}): id is missing`},
		{"genome id a string", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [` + valid(1) + `,` + "\n  " + `|{"id": "3", "output": 4, "nodes": []}]`), weights,
			`{json}: genome #1 (byte {N}): id must be a non-negative integer, got "3"`},
		{"genome id negative", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [|{"id": -1, "output": 4, "nodes": []}]`), weights,
			`{json}: genome #0 (byte {N}): id must be a non-negative integer, got -1`},
		{"genome id a float", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [|{"id": 1.0, "output": 4, "nodes": []}]`), weights,
			`{json}: genome #0 (byte {N}): id must be a non-negative integer, got 1.0`},
		{"genome id too large", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [|{"id": 99999999999999999999, "nodes": []}]`), weights,
			`{json}: genome #0 (byte {N}): id must be a non-negative integer, got 99999999999999999999`},
		{"duplicate genome ids", withHeader(`"num_classes": 3, "weights": "w.safetensors", "genomes": [` + valid(1) + `, ` + valid(2) + `, |` + valid(1) + `]`), weights,
			`{json}: genome #2 (byte {N}): id 1 is already genome #0's`},
		{"missing weights file", withHeader(rest), nil,
			`{json}: weights "w.safetensors": open {weights}: no such file or directory`},
		{"truncated weights", withHeader(rest), weights[:len(weights)-4],
			`{weights}: tensor "g2.n4.bias": data_offsets [428 440] point outside the data area of 436 bytes`},
		{"header larger than the file", withHeader(rest), []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'},
			`{weights}: header length 65535 exceeds file size 10`},
		{"header not JSON", withHeader(rest), append([]byte{2, 0, 0, 0, 0, 0, 0, 0}, "{]"...),
			`{weights}: header (bytes 8 to 10) is not a JSON object: invalid character ']'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			json := strings.Replace(c.json, "|", "", 1)
			path := writePop(t, json, c.weights)
			want := strings.NewReplacer("{json}", path, "{weights}", filepath.Join(filepath.Dir(path), "w.safetensors"),
				"{N}", fmt.Sprint(strings.Index(c.json, "|"))).Replace(c.want)
			pop, err := neat.Load(path)
			if err == nil {
				t.Fatalf("Load succeeded with %d genomes, want %q", len(pop.Genomes), want)
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Load error\n got %v\nwant %s", err, want)
			}
			if pop != nil {
				t.Errorf("Load returned a population with its error")
			}
		})
	}

	missing := filepath.Join(t.TempDir(), "none.json")
	if _, err := neat.Load(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load of a missing file: %v, want a not-exist error naming it", err)
	}
}
