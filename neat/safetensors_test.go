package neat_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

// stTensor is a tensor to put in a hand-made safetensors file: raw bytes
// with a dtype and shape as the header should claim them.
type stTensor struct {
	name, dtype string
	shape       []int
	data        []byte
}

// encodeST builds a safetensors file independently of the package's writer:
// tensors in the given order, the header unpadded, metadata included.
func encodeST(ts ...stTensor) []byte {
	var hdr strings.Builder
	hdr.WriteString(`{"__metadata__":{"format":"pt"}`)
	off := 0
	for _, t := range ts {
		shape := make([]string, len(t.shape))
		for i, d := range t.shape {
			shape[i] = fmt.Sprint(d)
		}
		fmt.Fprintf(&hdr, `,%q:{"dtype":%q,"shape":[%s],"data_offsets":[%d,%d]}`,
			t.name, t.dtype, strings.Join(shape, ","), off, off+len(t.data))
		off += len(t.data)
	}
	hdr.WriteString("}")
	out := binary.LittleEndian.AppendUint64(nil, uint64(hdr.Len()))
	out = append(out, hdr.String()...)
	for _, t := range ts {
		out = append(out, t.data...)
	}
	return out
}

func f32Bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// f16Bits rounds a float32 to the nearest half-precision value (ties to
// even).
func f16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000:
		return sign | 0x7e00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := mant >> shift
		rem, half := mant&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	default:
		h := uint32(exp)<<10 | mant>>13
		rem := mant & 0x1fff
		if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
			h++ // a carry into the exponent is still right
		}
		return sign | uint16(h)
	}
}

// bf16Bits rounds a float32 to the nearest bfloat16 (ties to even).
func bf16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func halfBytes(enc func(float32) uint16, v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint16(b, enc(x))
	}
	return b
}

func TestReadF16BF16(t *testing.T) {
	vals := []float32{1, -2.5, 0.1, 65504, 6.1035156e-05, 5.9604645e-08, -0.333, 1000.7}
	file := encodeST(
		stTensor{"h", "F16", []int{2, 4}, halfBytes(f16Bits, vals...)},
		stTensor{"b", "BF16", []int{8}, halfBytes(bf16Bits, vals...)},
		stTensor{"f", "F32", []int{4, 1, 2}, f32Bytes(vals...)},
		stTensor{"i", "I32", []int{2}, make([]byte, 8)},
		stTensor{"s", "F32", []int{}, f32Bytes(3)},
		stTensor{"z", "F16", []int{0, 5}, nil},
	)
	ts, err := neat.DecodeSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if got, tol := ts["h"].Data[i], math.Abs(float64(v))/2048; math.Abs(float64(got-v)) > tol {
			t.Errorf("F16 %v read as %v", v, got)
		}
		if got, tol := ts["b"].Data[i], math.Abs(float64(v))/256; math.Abs(float64(got-v)) > tol {
			t.Errorf("BF16 %v read as %v", v, got)
		}
		if got := ts["f"].Data[i]; got != v {
			t.Errorf("F32 %v read as %v", v, got)
		}
	}
	if got := ts["h"].Data[0:2]; got[0] != 1 || got[1] != -2.5 {
		t.Errorf("exact F16 values read as %v", got)
	}
	for name, want := range map[string]struct {
		dtype string
		shape []int
		n     int
	}{"h": {"F16", []int{2, 4}, 8}, "b": {"BF16", []int{8}, 8}, "f": {"F32", []int{4, 1, 2}, 8},
		"i": {"I32", []int{2}, 0}, "s": {"F32", []int{}, 1}, "z": {"F16", []int{0, 5}, 0}} {
		got := ts[name]
		if got == nil || got.DType != want.dtype || !slices.Equal(got.Shape, want.shape) || len(got.Data) != want.n {
			t.Errorf("tensor %s = %+v, want dtype %s shape %v and %d values", name, got, want.dtype, want.shape, want.n)
		}
	}
	if ts["i"].Data != nil {
		t.Errorf("an I32 tensor has float data %v", ts["i"].Data)
	}
	if _, ok := ts["__metadata__"]; ok || len(ts) != 6 {
		t.Errorf("read %d tensors (metadata included: %v), want 6", len(ts), ok)
	}
}

func TestWriteSafetensors(t *testing.T) {
	dir := t.TempDir()
	ts := map[string]*neat.Tensor{
		"b":     {Shape: []int{3}, Data: []float32{1, 2, 3}},
		"a.x":   {Shape: []int{2, 1}, Data: []float32{-0.5, float32(math.Inf(1))}},
		"empty": {Shape: []int{0}, Data: []float32{}},
		"h":     {Shape: []int{1}, Data: []float32{0.25}, DType: "F16"},
	}
	path := filepath.Join(dir, "w.safetensors")
	if err := neat.WriteSafetensors(path, ts); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := `{"a.x":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]},` +
		`"b":{"dtype":"F32","shape":[3],"data_offsets":[8,20]},` +
		`"empty":{"dtype":"F32","shape":[0],"data_offsets":[20,20]},` +
		`"h":{"dtype":"F32","shape":[1],"data_offsets":[20,24]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	want := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	want = append(want, hdr...)
	want = append(want, f32Bytes(-0.5, float32(math.Inf(1)), 1, 2, 3, 0.25)...)
	if !bytes.Equal(data, want) {
		t.Errorf("file\n%q\nwant\n%q", data, want)
	}
	back, err := neat.ReadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range ts {
		got := back[name]
		if got == nil || !slices.Equal(got.Shape, tt.Shape) || !slices.Equal(got.Data, tt.Data) || got.DType != "F32" {
			t.Errorf("%s read back as %+v, want %+v", name, got, tt)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want only the result", len(entries))
	}

	for _, bad := range []struct {
		ts   map[string]*neat.Tensor
		want string
	}{
		{map[string]*neat.Tensor{"x": {Shape: []int{2}, Data: []float32{1}}}, `tensor "x" has 1 values for shape [2]`},
		{map[string]*neat.Tensor{"x": nil}, `tensor "x" is nil`},
		{map[string]*neat.Tensor{"x": {Shape: []int{2}, DType: "I32"}}, `tensor "x" has dtype I32 and no float values`},
		{map[string]*neat.Tensor{"__metadata__": {Shape: []int{}, Data: []float32{1}}}, `tensor name "__metadata__" is reserved`},
	} {
		err := neat.WriteSafetensors(path, bad.ts)
		if want := path + ": " + bad.want; err == nil || err.Error() != want {
			t.Errorf("WriteSafetensors: %v, want %q", err, want)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Errorf("a failed write changed the file")
	}
}

func TestSafetensorsErrors(t *testing.T) {
	good := encodeST(stTensor{"w", "F32", []int{2}, f32Bytes(1, 2)})
	withHeader := func(h string, data []byte) []byte {
		out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(out, h...), data...)
	}
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "file of 0 bytes is too short for the 8-byte header length"},
		{"short", []byte{1, 0, 0}, "file of 3 bytes is too short for the 8-byte header length"},
		{"header longer than the file", append(binary.LittleEndian.AppendUint64(nil, 99999), make([]byte, 1192)...),
			"header length 99999 exceeds file size 1200"},
		{"absurd header length", binary.LittleEndian.AppendUint64(nil, math.MaxUint64), "header length 18446744073709551615 exceeds file size 8"},
		{"truncated", good[:len(good)-1], `tensor "w": data_offsets [0 8] point outside the data area of 7 bytes`},
		{"header not JSON", withHeader(`{"w": [`, nil), "header (bytes 8 to 15) is not a JSON object: unexpected end of JSON input"},
		{"header an array", withHeader(`[1]`, nil), "header (bytes 8 to 11) is not a JSON object: json: cannot unmarshal array"},
		{"offsets outside", withHeader(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 8)),
			`tensor "w": data_offsets [4 12] point outside the data area of 8 bytes (file bytes 63 to 71)`},
		{"offsets reversed", withHeader(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, make([]byte, 8)),
			`tensor "w": data_offsets [4 0] point outside`},
		{"negative offset", withHeader(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[-4,0]}}`, make([]byte, 8)),
			`tensor "w": data_offsets [-4 0] point outside`},
		{"size mismatch", withHeader(`{"w":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)),
			`tensor "w": F16 shape [3] needs 6 bytes, data_offsets [0 8] hold 8`},
		{"lying shape", withHeader(`{"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}}`, make([]byte, 8)),
			`tensor "w": F32 shape [4294967296 4294967296 4294967296] needs more bytes than the file holds`},
		{"negative dimension", withHeader(`{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, make([]byte, 8)),
			`tensor "w": shape [-2] has a negative dimension`},
		{"missing dtype", withHeader(`{"w":{"shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)), `tensor "w": dtype is missing`},
		{"missing shape", withHeader(`{"w":{"dtype":"F32","data_offsets":[0,8]}}`, make([]byte, 8)), `tensor "w": shape is missing`},
		{"one offset", withHeader(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}}`, make([]byte, 8)),
			`tensor "w": data_offsets [0], want [begin, end]`},
		{"float offset", withHeader(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8.0]}}`, make([]byte, 8)),
			`tensor "w": bad header entry: json: cannot unmarshal number 8.0`},
		{"first bad tensor by name", withHeader(`{"z":{"dtype":"F32"},"b":{"dtype":"F32"},"c":{}}`, nil), `tensor "b": shape is missing`},
	}
	for _, c := range cases {
		_, err := neat.DecodeSafetensors(c.file)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to start with %q", c.name, err, c.want)
		}
	}
	// An unknown dtype is bounds-checked only; a zero-sized tensor may
	// point anywhere in the data area.
	for _, h := range []string{
		`{"w":{"dtype":"Q4","shape":[3],"data_offsets":[0,2]}}`,
		`{"w":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}}`,
		`{"w":{"dtype":"F32","shape":[4294967296,0],"data_offsets":[0,0]}}`,
	} {
		if _, err := neat.DecodeSafetensors(withHeader(h, make([]byte, 8))); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}

	path := filepath.Join(t.TempDir(), "bad.safetensors")
	os.WriteFile(path, []byte{1, 2}, 0o644)
	if _, err := neat.ReadSafetensors(path); err == nil || !strings.HasPrefix(err.Error(), path+": file of 2 bytes") {
		t.Errorf("ReadSafetensors: %v, want an error naming the file", err)
	}
	if _, err := neat.ReadSafetensors(path + ".none"); err == nil || !strings.Contains(err.Error(), path+".none") {
		t.Errorf("ReadSafetensors of a missing file: %v, want an error naming the file", err)
	}
}
