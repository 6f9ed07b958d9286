package neat

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io"
	"math"
	"sort"
)

// fileDigest is the identity of a population on disk (see LoadDigest):
// "sha256:" and the SHA-256 of a version tag, the length and bytes of the
// population JSON, and the bytes of the weights file it names. Any change to
// either file changes it.
func fileDigest(js, weights []byte) string {
	h := sha256.New()
	io.WriteString(h, "neateval.population.files/v1\n")
	writeU64(h, uint64(len(js)))
	h.Write(js)
	h.Write(weights)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// ContentDigest is the identity of a population held in memory (a
// generated one), from its content: input shape, classes, and every
// genome's id, output, nodes and weights in a canonical order. Two
// populations with the same content have the same digest, whatever
// produced them.
func ContentDigest(pop *Population) string {
	h := sha256.New()
	io.WriteString(h, "neateval.population.content/v1\n")
	ints := func(xs ...int64) {
		for _, x := range xs {
			writeU64(h, uint64(x))
		}
	}
	str := func(s string) {
		ints(int64(len(s)))
		io.WriteString(h, s)
	}
	tensor := func(t *Tensor) {
		if t == nil {
			ints(-1)
			return
		}
		ints(int64(len(t.Shape)))
		for _, d := range t.Shape {
			ints(int64(d))
		}
		ints(int64(len(t.Data)))
		for _, x := range t.Data {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	ints(int64(pop.Input.Channels), int64(pop.Input.Height), int64(pop.Input.Width), int64(pop.NumClasses), int64(len(pop.Genomes)))
	for _, g := range pop.Genomes {
		ints(g.ID, int64(g.Output), int64(len(g.Nodes)))
		for _, n := range g.Nodes {
			ints(int64(n.ID), int64(len(n.Inputs)))
			for _, in := range n.Inputs {
				ints(int64(in))
			}
			str(string(n.Op))
			str(string(n.Merge))
			str(string(n.Activation))
			ints(int64(n.OutChannels), int64(n.OutFeatures), int64(n.Kernel), int64(n.Stride), int64(n.Padding))
		}
		ids := make([]int, 0, len(g.Params))
		for id := range g.Params {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		ints(int64(len(ids)))
		for _, id := range ids {
			ints(int64(id))
			p := g.Params[id]
			if p == nil {
				ints(-2)
				continue
			}
			tensor(p.Weight)
			tensor(p.Bias)
		}
		if g.Invalid != nil {
			str(g.Invalid.Error())
		} else {
			ints(-1)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func writeU64(h hash.Hash, x uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], x)
	h.Write(b[:])
}
