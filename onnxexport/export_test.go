package onnxexport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/onnxexport"
)

// fields splits an encoded message into its fields: number → raw values
// (the bytes of a length-delimited field, the varint as 8 bytes otherwise).
func fields(t *testing.T, b []byte) map[protowire.Number][][]byte {
	t.Helper()
	out := map[protowire.Number][][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			var x uint64
			x, n = protowire.ConsumeVarint(b)
			v = protowire.AppendVarint(nil, x)
		case protowire.Fixed32Type:
			_, n = protowire.ConsumeFixed32(b)
			v = b[:4]
		default:
			t.Fatalf("field %d: unexpected wire type %d", num, typ)
		}
		if n < 0 {
			t.Fatalf("field %d: %v", num, protowire.ParseError(n))
		}
		out[num] = append(out[num], v)
		b = b[n:]
	}
	return out
}

func varint(b []byte) int64 { v, _ := protowire.ConsumeVarint(b); return int64(v) }

// opTypes decodes a model and returns its graph's op types in order.
func opTypes(t *testing.T, model []byte) []string {
	m := fields(t, model)
	if got := varint(m[1][0]); got != onnxexport.IRVersion {
		t.Errorf("ir_version %d", got)
	}
	opset := fields(t, m[8][0])
	if len(opset[1]) != 0 && len(opset[1][0]) != 0 || varint(opset[2][0]) != onnxexport.Opset {
		t.Errorf("opset_import %q", m[8][0])
	}
	var ops []string
	for _, n := range fields(t, m[7][0])[1] {
		ops = append(ops, string(fields(t, n)[4][0]))
	}
	return ops
}

func TestOps(t *testing.T) {
	cases := edgeCases(t)
	for _, c := range []struct {
		g    *neat.Genome
		want []string
	}{
		{cases[0], []string{"Conv", "Relu", "GlobalAveragePool", "Flatten", "Gemm"}},
		{cases[51], []string{"Conv", "Tanh", "GlobalAveragePool", "Flatten", "Gemm", "Tanh"}}, // activations: tanh
		{cases[53], []string{"Conv", "Div", "Erf", "Add", "Mul", "Mul", "GlobalAveragePool", "Flatten", "Gemm",
			"Div", "Erf", "Add", "Mul", "Mul"}}, // gelu
		{cases[78], []string{"Conv", "Relu", "Pad", "Add", "Conv", "Tanh", "Pad", "Pad", "Add", "Add", "Conv", "Relu",
			"GlobalAveragePool", "Flatten", "Gemm"}}, // sum merges
		{cases[79], []string{"Conv", "Relu", "Concat", "Conv", "Tanh", "Concat", "Conv", "Relu", "GlobalAveragePool",
			"Flatten", "Gemm"}}, // concat merges
		{cases[81], []string{"Flatten", "Gemm", "Sigmoid"}}, // dense on the input
	} {
		b, err := onnxexport.Encode(c.g, mnist, classes, onnxexport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := opTypes(t, b); !slices.Equal(got, c.want) {
			t.Errorf("genome %d: ops %v, want %v", c.g.ID, got, c.want)
		}
	}
}

// TestDeterministic: the same genome gives the same bytes, and Write
// writes what Encode returns.
func TestDeterministic(t *testing.T) {
	for _, g := range generated(5, 8, 1) {
		a, err := onnxexport.Encode(g, mnist, classes, onnxexport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := onnxexport.Write(&b, g, mnist, classes, onnxexport.Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b.Bytes()) {
			t.Errorf("genome %d: Encode and Write differ", g.ID)
		}
	}
}

// TestInitializers: every weight and bias is stored, bit for bit, under its
// safetensors name.
func TestInitializers(t *testing.T) {
	g := edgeCases(t)[78]
	b, err := onnxexport.Encode(g, mnist, classes, onnxexport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inits := map[string][]byte{}
	for _, tp := range fields(t, fields(t, b)[7][0])[5] {
		f := fields(t, tp)
		inits[string(f[8][0])] = f[9][0]
	}
	for id, p := range g.Params {
		for kind, tensor := range map[string]*neat.Tensor{"weight": p.Weight, "bias": p.Bias} {
			name := fmt.Sprintf("g%d.n%d.%s", g.ID, id, kind)
			raw, ok := inits[name]
			if !ok || len(raw) != 4*len(tensor.Data) {
				t.Fatalf("%s: %d bytes stored", name, len(raw))
			}
			for i, v := range tensor.Data {
				if got := math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24); got != v {
					t.Fatalf("%s[%d] = %v, want %v", name, i, got, v)
				}
			}
		}
	}
}

func TestInvalidGenome(t *testing.T) {
	g := edgeCases(t)[0]
	g.Params[1].Weight.Shape = []int{3, 2, 1, 1}
	err := onnxexport.Write(&bytes.Buffer{}, g, mnist, classes, onnxexport.Options{})
	var ge *neat.GenomeError
	if !errors.As(err, &ge) || ge.Genome != g.ID || ge.Node != 1 {
		t.Fatalf("error %v, want a GenomeError for genome %d node 1", err, g.ID)
	}
}

func TestBest(t *testing.T) {
	cfg := neat.DefaultEvolveConfig()
	cfg.PopulationSize = 8
	evo, err := neat.NewEvolution(mnist, classes, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := onnxexport.Best(dir); err == nil {
		t.Error("Best of an empty folder: no error")
	}
	params := func(ctx context.Context, pop *neat.Population) ([]float64, error) {
		fs := make([]float64, len(pop.Genomes))
		for i, g := range pop.Genomes {
			gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
			if err != nil {
				return nil, err
			}
			fs[i] = float64(gr.Params)
		}
		return fs, nil
	}
	for range 3 {
		if _, err := evo.Step(context.Background(), params); err != nil {
			t.Fatal(err)
		}
	}
	if err := evo.SaveCheckpoint(dir, ""); err != nil {
		t.Fatal(err)
	}
	pop, err := onnxexport.Best(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := evo.Best()
	if len(pop.Genomes) != 1 || pop.Genomes[0].ID != want.ID {
		t.Fatalf("Best: %d genomes, first %d; want genome %d", len(pop.Genomes), pop.Genomes[0].ID, want.ID)
	}
	out := filepath.Join(t.TempDir(), "best.onnx")
	if err := onnxexport.WriteFile(out, pop.Genomes[0], pop, onnxexport.Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("best.onnx: %v", err)
	}
}

// A population exported for onnxruntime: one model per genome and a
// manifest in the population's order.
func ExampleWritePopulation() {
	pop := neat.Generate(1, 3, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	dir, _ := os.MkdirTemp("", "onnx")
	defer os.RemoveAll(dir)
	m, err := onnxexport.WritePopulation(dir, pop, onnxexport.Options{})
	if err != nil {
		panic(err)
	}
	for _, e := range m.Genomes {
		fmt.Println(e.GenomeID, e.File)
	}
	// Output:
	// 0 genome-0.onnx
	// 1 genome-1.onnx
	// 2 genome-2.onnx
}
