package neat

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
)

// Save writes pop as a population: the JSON at jsonPath and an F32
// safetensors file named weightsName, relative to the JSON's folder (the
// "weights" field says so). Both files are written atomically, the weights
// first, and their bytes depend only on pop.
//
// Defaults stay implicit: a zero Stride, Merge or Activation, or
// PaddingDefault, is not written, so Load gives back the same nodes. Only
// the fields a node's op uses are written, and merge only on a node with
// several inputs. Each listed node's Params are written; Params of node ids
// not listed are not.
//
// Save refuses what Load would refuse (no genomes, a duplicate or negative
// genome id, a bad input or class count) and what the format cannot
// express: a genome with Invalid set, a node with a Problem, a tensor
// without float values.
func Save(pop *Population, jsonPath, weightsName string) error {
	if err := checkSavable(pop, weightsName); err != nil {
		return fmt.Errorf("%s: %w", jsonPath, err)
	}
	tensors := map[string]*Tensor{}
	for _, g := range pop.Genomes {
		for i := range g.Nodes {
			p := g.Params[g.Nodes[i].ID]
			if p == nil {
				continue
			}
			if p.Weight != nil {
				tensors[TensorName(g.ID, g.Nodes[i].ID, "weight")] = p.Weight
			}
			if p.Bias != nil {
				tensors[TensorName(g.ID, g.Nodes[i].ID, "bias")] = p.Bias
			}
		}
	}
	if err := WriteSafetensors(filepath.Join(filepath.Dir(jsonPath), weightsName), tensors); err != nil {
		return err
	}
	err := writeAtomic(jsonPath, func(w *bufio.Writer) error {
		writePopulationJSON(w, pop, weightsName)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", jsonPath, err)
	}
	return nil
}

func checkSavable(pop *Population, weightsName string) error {
	in := pop.Input
	switch {
	case weightsName == "":
		return fmt.Errorf("no weights file name")
	case len(pop.Genomes) == 0:
		return fmt.Errorf("no genomes")
	case pop.NumClasses < 1 || pop.NumClasses > MaxSize:
		return fmt.Errorf("num_classes %d, want 1 to %d", pop.NumClasses, MaxSize)
	case in.Channels < 1 || in.Height < 1 || in.Width < 1 || !sizeOK(Shape{C: in.Channels, H: in.Height, W: in.Width}):
		return fmt.Errorf("input %d×%d×%d, want each at least 1 and at most %d elements", in.Channels, in.Height, in.Width, MaxSize)
	}
	seen := map[int64]bool{}
	for i, g := range pop.Genomes {
		if g.ID < 0 {
			return fmt.Errorf("genome #%d: id %d is negative", i, g.ID)
		}
		if seen[g.ID] {
			return fmt.Errorf("genome #%d: duplicate genome id %d", i, g.ID)
		}
		seen[g.ID] = true
		if g.Invalid != nil {
			return fmt.Errorf("cannot save an invalid genome: %w", g.Invalid)
		}
		for _, n := range g.Nodes {
			if n.Problem != "" {
				return fmt.Errorf("cannot save an invalid genome: %w", genomeErr(g.ID, n.ID, "%s", n.Problem))
			}
		}
	}
	return nil
}

// writePopulationJSON writes the JSON part, one genome header per line and
// one node per line. Errors are kept by w for its Flush.
func writePopulationJSON(w *bufio.Writer, pop *Population, weightsName string) {
	var b []byte
	b = append(b, "{\n  \"format\": "...)
	b = appendString(b, FormatV1)
	b = append(b, ",\n  \"input\": {\"channels\": "...)
	b = strconv.AppendInt(b, int64(pop.Input.Channels), 10)
	b = append(b, ", \"height\": "...)
	b = strconv.AppendInt(b, int64(pop.Input.Height), 10)
	b = append(b, ", \"width\": "...)
	b = strconv.AppendInt(b, int64(pop.Input.Width), 10)
	b = append(b, "},\n  \"num_classes\": "...)
	b = strconv.AppendInt(b, int64(pop.NumClasses), 10)
	b = append(b, ",\n  \"weights\": "...)
	b = appendString(b, weightsName)
	b = append(b, ",\n  \"genomes\": ["...)
	for i, g := range pop.Genomes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"id\": "...)
		b = strconv.AppendInt(b, g.ID, 10)
		b = append(b, ", \"output\": "...)
		b = strconv.AppendInt(b, int64(g.Output), 10)
		b = append(b, ", \"nodes\": ["...)
		for j := range g.Nodes {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n      "...)
			b = appendNode(b, &g.Nodes[j])
		}
		b = append(b, "\n    ]}"...)
		w.Write(b)
		b = b[:0]
	}
	b = append(b, "\n  ]\n}\n"...)
	w.Write(b)
}

func appendNode(b []byte, n *Node) []byte {
	b = append(b, "{\"id\": "...)
	b = strconv.AppendInt(b, int64(n.ID), 10)
	b = append(b, ", \"op\": "...)
	b = appendString(b, string(n.Op))
	b = append(b, ", \"inputs\": ["...)
	for i, in := range n.Inputs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(in), 10)
	}
	b = append(b, ']')
	if len(n.Inputs) > 1 && n.Merge != "" {
		b = append(b, ", \"merge\": "...)
		b = appendString(b, string(n.Merge))
	}
	field := func(key string, v int) {
		b = append(b, ", \""...)
		b = append(b, key...)
		b = append(b, "\": "...)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	switch n.Op {
	case OpConv2D:
		field("out_channels", n.OutChannels)
	case OpDense:
		field("out_features", n.OutFeatures)
	}
	switch n.Op {
	case OpConv2D, OpMaxPool2D, OpAvgPool2D:
		field("kernel", n.Kernel)
		if n.Stride != 0 {
			field("stride", n.Stride)
		}
	}
	if n.Op == OpConv2D && n.Padding != PaddingDefault {
		field("padding", n.Padding)
	}
	if (n.Op == OpConv2D || n.Op == OpDense) && n.Activation != "" {
		b = append(b, ", \"activation\": "...)
		b = appendString(b, string(n.Activation))
	}
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
