package neat

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"
	"unsafe"
)

// TestScanHeaderSameAsJSON: a header the plain scanner accepts gives the
// entries encoding/json gives; one it refuses is left to encoding/json.
func TestScanHeaderSameAsJSON(t *testing.T) {
	area := make([]byte, 64)
	plain := []string{
		`{}`,
		`{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}`,
		`{"__metadata__":{"format":"pt"},"a.b":{"dtype":"F16","shape":[],"data_offsets":[4,6]},"c":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}}`,
		" { \"a\" : { \"dtype\" : \"BF16\" , \"shape\" : [ 4 ] , \"data_offsets\" : [ 0 , 8 ] } }\n   ",
		`{"x":{"dtype":"I64","shape":[1],"data_offsets":[16,24]},"y":{"dtype":"U4","shape":[3],"data_offsets":[24,25]}}`,
	}
	for _, h := range plain {
		got, ok := scanHeader([]byte(h), area, 8+len(h))
		if !ok {
			t.Errorf("scanHeader refused the plain header %s", h)
			continue
		}
		want, err := headerJSON([]byte(h), area, 8+len(h))
		if err != nil {
			t.Fatalf("headerJSON(%s): %v", h, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("header %s: scanner %v, encoding/json %v", h, got, want)
		}
	}
	other := []string{
		`{"a":{"shape":[2],"dtype":"F32","data_offsets":[0,8]}}`,                                                      // another field order
		`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`,                                                // an unknown field
		`{"\u0061":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,                                                 // an escape
		`{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`,                                                    // a fraction
		`{"a":{"dtype":"F32","shape":[02],"data_offsets":[0,8]}}`,                                                     // a leading zero
		`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, // a duplicate
		`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`,                                                      // a wrong size
		`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,800]}}`,                                                    // out of the area
		`{"a":{"dtype":"F32","shape":null,"data_offsets":[0,8]}}`,                                                     // no shape
		`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x`,                                                    // trailing bytes
		`{"__metadata__":{"n":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},}`,
	}
	for _, h := range other {
		if _, ok := scanHeader([]byte(h), area, 8+len(h)); ok {
			t.Errorf("scanHeader accepted %s, which is for encoding/json", h)
		}
	}
}

// TestFirstNonFinite checks the branch-free scan against one value at a
// time, for every position of a NaN, +Inf or −Inf in slices of 0 to 20.
func TestFirstNonFinite(t *testing.T) {
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff)}
	good := []float32{0, -0.0, 1, -3.4e38, math.MaxFloat32, math.SmallestNonzeroFloat32, math.Float32frombits(0x7f7fffff)}
	for n := range 21 {
		v := make([]float32, n)
		for i := range v {
			v[i] = good[i%len(good)]
		}
		if got := firstNonFinite(v); got != -1 {
			t.Fatalf("n=%d all finite: got %d", n, got)
		}
		for at := range n {
			for _, b := range bad {
				w := append([]float32(nil), v...)
				w[at] = b
				if at+1 < n {
					w[n-1] = b // a later one too: the first counts
				}
				if got := firstNonFinite(w); got != at {
					t.Fatalf("n=%d, %v at %d: got %d", n, b, at, got)
				}
			}
		}
	}
}

// TestLoadViews: a loaded file's F32 tensors are views of the file's bytes
// only where that is safe (aligned, not overlapping another tensor), and
// hold the same values as the copies Parse makes.
func TestLoadViews(t *testing.T) {
	vals := []float32{1, -2, 3.5, 4, 5, 6}
	body := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(body[4*i:], math.Float32bits(v))
	}
	file := func(hdr string) []byte {
		for (8+len(hdr))%4 != 0 {
			hdr += " "
		}
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
		return append(append(b, hdr...), body...)
	}
	within := func(t *Tensor, f []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(t.Data)))
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(f)))
		return p >= lo && p < lo+uintptr(len(f))
	}
	pop := func(hdr string, own bool) (*Population, []byte) {
		js := `{"format":"neateval.population/v1","input":{"channels":1,"height":1,"width":1},"num_classes":2,"weights":"w",` +
			`"genomes":[{"id":1,"output":1,"nodes":[{"id":1,"op":"dense","inputs":[0],"out_features":2}]}]}`
		p, _, err := ParsePopulationJSON([]byte(js), "p.json")
		if err != nil {
			t.Fatal(err)
		}
		f := file(hdr)
		if _, err := withWeights(p, []byte(js), f, "w", own); err != nil {
			t.Fatal(err)
		}
		return p, f
	}
	disjointHdr := `{"g1.n1.bias":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"g1.n1.weight":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]}}`
	overlapHdr := `{"g1.n1.bias":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},"g1.n1.weight":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]}}`
	for _, c := range []struct {
		name, hdr string
		own, view bool
	}{
		{"own, disjoint", disjointHdr, true, true},
		{"own, overlapping", overlapHdr, true, false},
		{"the caller's", disjointHdr, false, false},
	} {
		p, f := pop(c.hdr, c.own)
		want, _ := pop(c.hdr, false)
		prm, wprm := p.Genomes[0].Params[1], want.Genomes[0].Params[1]
		for _, pair := range [][2]*Tensor{{prm.Weight, wprm.Weight}, {prm.Bias, wprm.Bias}} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("%s: tensor %v, the copy %v", c.name, pair[0], pair[1])
			}
			if within(pair[0], f) != c.view {
				t.Errorf("%s: view %v, want %v", c.name, within(pair[0], f), c.view)
			}
		}
	}
}
