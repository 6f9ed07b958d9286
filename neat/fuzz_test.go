package neat_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

// specExample is the population of the format's specification.
const specExample = `{
  "format": "neateval.population/v1",
  "input": {"channels": 1, "height": 28, "width": 28},
  "num_classes": 10,
  "weights": "population.safetensors",
  "genomes": [
    {
      "id": 17,
      "output": 5,
      "nodes": [
        {"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 8, "kernel": 3, "stride": 1, "padding": 1, "activation": "relu"},
        {"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2},
        {"id": 3, "op": "conv2d", "inputs": [2], "out_channels": 12, "kernel": 3, "activation": "tanh"},
        {"id": 4, "op": "conv2d", "inputs": [2, 3], "merge": "sum", "out_channels": 16, "kernel": 1, "padding": 0},
        {"id": 6, "op": "global_avg_pool", "inputs": [4]},
        {"id": 5, "op": "dense", "inputs": [6], "out_features": 10}
      ]
    }
  ]
}`

func FuzzLoadPopulationJSON(f *testing.F) {
	f.Add([]byte(specExample))
	f.Add([]byte(popHeader + `{"id": 1, "output": 4, "nodes": [` + strings.Join(baseNodes, ",") + `]}]}`))
	f.Add([]byte(popHeader + `{"id": 1, "output": 4, "nodes": [{"id": 1, "op": "conv2d", "inputs": [0, 1], "kernel": "3"}, 5]},
		{"id": 2, "output": 3, "nodes": {}}, {"id": 3}]}`))
	f.Add([]byte(popHeader + `{"id": 1}, {"id": 1}]}`))
	f.Add([]byte(popHeader + `{"id": 1, "output": 2, "nodes": [{"id": 2, "op": "conv2d", "inputs": [0], "out_channels": 2147483648,
		"kernel": 1, "padding": 2147483648}, {"id": 3, "op": "dense", "inputs": [2, 2], "merge": "concat", "out_features": 1}]}]}`))
	f.Add([]byte(`{"format": "neateval.population/v1", "genomes": [{"id": -1}]}`))
	f.Add([]byte(`{"format": nul`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pop, weights, err := neat.ParsePopulationJSON(data, "fuzz.json")
		if err != nil {
			if pop != nil || !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Fatalf("error %q with population %v", err, pop)
			}
			return
		}
		if weights == "" || len(pop.Genomes) == 0 || pop.NumClasses < 1 || pop.Input.Channels < 1 {
			t.Fatalf("accepted weights %q, %d genomes, %d classes, input %+v", weights, len(pop.Genomes), pop.NumClasses, pop.Input)
		}
		ids := map[int64]bool{}
		for _, g := range pop.Genomes {
			if g.ID < 0 || ids[g.ID] {
				t.Fatalf("genome id %d accepted", g.ID)
			}
			ids[g.ID] = true
			_, err := neat.Compile(g, pop.Input, pop.NumClasses)
			var ge *neat.GenomeError
			if err != nil && (!errors.As(err, &ge) || ge.Genome != g.ID) {
				t.Fatalf("genome %d: error %#v does not name it", g.ID, err)
			}
		}
	})
}

func FuzzReadSafetensors(f *testing.F) {
	good := encodeST(
		stTensor{"g1.n1.weight", "F32", []int{2, 1}, f32Bytes(1, 2)},
		stTensor{"g1.n1.bias", "F16", []int{2}, halfBytes(f16Bits, 1, 2)},
		stTensor{"x", "BF16", []int{1, 1, 1}, halfBytes(bf16Bits, 3)},
		stTensor{"i", "I32", []int{1}, make([]byte, 4)},
	)
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(good[:12])
	lying := binary.LittleEndian.AppendUint64(nil, 40)
	lying = append(lying, `{"w":{"dtype":"F32","shape":[1073741824],"data_offsets":[0,4294967296]}}`[:40]...)
	f.Add(lying)
	f.Add(binary.LittleEndian.AppendUint64(nil, 1<<62))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := neat.DecodeSafetensors(data)
		if err != nil {
			return
		}
		// What was decoded is bounded by the file: at most 2 float32
		// bytes per file byte (F16 and BF16 double).
		total := 0
		for name, tt := range ts {
			if tt.Data != nil && len(tt.Data) != tt.Len() {
				t.Fatalf("%s: %d values for shape %v", name, len(tt.Data), tt.Shape)
			}
			total += 4 * len(tt.Data)
		}
		if total > 2*len(data) {
			t.Fatalf("decoded %d bytes of floats from a file of %d", total, len(data))
		}
	})
}
