package neat

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"
)

// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON mapping each tensor name to {"dtype", "shape", "data_offsets"} (plus
// an optional "__metadata__" object), then the data area; data_offsets
// [begin, end) are relative to the first byte after the header.

// dtypeSizes are the element sizes of the safetensors dtypes. Tensors of a
// dtype not listed here are bounds-checked but their size is not.
var dtypeSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// stEntry is one tensor of a parsed safetensors file.
type stEntry struct {
	dtype string
	shape []int
	numel int
	data  []byte // the tensor's bytes: a slice of the file
}

// tensor decodes the entry. F32, F16 and BF16 become float32 Data; any other
// dtype gives a Tensor with a shape and no Data.
// littleEndian says whether this machine stores a float32 as safetensors
// does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (e *stEntry) tensor() *Tensor {
	t := &Tensor{Shape: slices.Clone(e.shape), DType: e.dtype}
	le := binary.LittleEndian
	switch e.dtype {
	case "F32":
		t.Data = make([]float32, e.numel)
		if littleEndian && len(t.Data) > 0 {
			// The file's bytes are the values' bytes: one copy.
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&t.Data[0])), 4*len(t.Data)), e.data)
			break
		}
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(le.Uint32(e.data[4*i:]))
		}
	case "F16":
		t.Data = make([]float32, e.numel)
		for i := range t.Data {
			t.Data[i] = f16ToF32(le.Uint16(e.data[2*i:]))
		}
	case "BF16":
		t.Data = make([]float32, e.numel)
		for i := range t.Data {
			t.Data[i] = bf16ToF32(le.Uint16(e.data[2*i:]))
		}
	}
	return t
}

// view is the entry as a tensor whose Data are the file's own bytes, with
// no copy: for an F32 tensor on a little-endian machine at a 4-byte
// aligned address; nil otherwise. Only for a file buffer nothing else uses,
// whose tensors do not overlap (disjoint): a tensor's Data may then be
// written like any other's.
func (e *stEntry) view() *Tensor {
	if e.dtype != "F32" || !littleEndian || uintptr(unsafe.Pointer(unsafe.SliceData(e.data)))%4 != 0 {
		return nil
	}
	t := &Tensor{Shape: slices.Clone(e.shape), DType: e.dtype}
	if e.numel > 0 {
		t.Data = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(e.data))), e.numel)
	} else {
		t.Data = []float32{}
	}
	return t
}

// disjoint reports whether no two entries share a byte of the file.
func disjoint(entries map[string]stEntry) bool {
	type span struct{ lo, hi uintptr }
	spans := make([]span, 0, len(entries))
	for _, e := range entries {
		if len(e.data) > 0 {
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(e.data)))
			spans = append(spans, span{lo, lo + uintptr(len(e.data))})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			return false
		}
	}
	return true
}

// parseSafetensors checks a whole safetensors file held in data and indexes
// its tensors without decoding them. Every allocation is bounded by
// len(data), whatever the header claims.
func parseSafetensors(data []byte) (map[string]stEntry, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("file of %d bytes is too short for the 8-byte header length", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return nil, fmt.Errorf("header length %d exceeds file size %d", n, len(data))
	}
	hdrEnd := 8 + int(n)
	if entries, ok := scanHeader(data[8:hdrEnd], data[hdrEnd:], hdrEnd); ok {
		return entries, nil
	}
	return headerJSON(data[8:hdrEnd], data[hdrEnd:], hdrEnd)
}

// headerJSON indexes the tensors of any header, hdr, with encoding/json;
// the data area, area, starts at file byte hdrEnd.
func headerJSON(hdr, area []byte, hdrEnd int) (map[string]stEntry, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("header (bytes 8 to %d) is not a JSON object: %w", hdrEnd, err)
	}
	entries := make(map[string]stEntry, len(raw))
	// Errors are reported for the first bad tensor in name order, so the
	// message does not depend on map iteration.
	var firstBad string
	var firstErr error
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		e, err := parseEntry(msg, area, hdrEnd)
		if err != nil {
			if firstErr == nil || name < firstBad {
				firstBad, firstErr = name, err
			}
			continue
		}
		entries[name] = e
	}
	if firstErr != nil {
		return nil, fmt.Errorf("tensor %q: %w", firstBad, firstErr)
	}
	return entries, nil
}

func parseEntry(msg json.RawMessage, area []byte, hdrEnd int) (stEntry, error) {
	var h struct {
		DType       *string `json:"dtype"`
		Shape       []int64 `json:"shape"`
		DataOffsets []int64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(msg, &h); err != nil {
		return stEntry{}, fmt.Errorf("bad header entry: %w", err)
	}
	switch {
	case h.DType == nil:
		return stEntry{}, fmt.Errorf("dtype is missing")
	case h.Shape == nil:
		return stEntry{}, fmt.Errorf("shape is missing")
	case len(h.DataOffsets) != 2:
		return stEntry{}, fmt.Errorf("data_offsets %v, want [begin, end]", h.DataOffsets)
	}
	return checkEntry(*h.DType, h.Shape, h.DataOffsets[0], h.DataOffsets[1], area, hdrEnd)
}

// checkEntry checks one tensor's header fields against the data area, area,
// which starts at file byte hdrEnd, and returns the entry.
func checkEntry(dtype string, shape []int64, begin, end int64, area []byte, hdrEnd int) (stEntry, error) {
	if begin < 0 || end < begin || end > int64(len(area)) {
		return stEntry{}, fmt.Errorf("data_offsets [%d %d] point outside the data area of %d bytes (file bytes %d to %d)",
			begin, end, len(area), hdrEnd, hdrEnd+len(area))
	}
	e := stEntry{dtype: dtype, shape: make([]int, len(shape)), data: area[begin:end]}
	elem, known := dtypeSizes[e.dtype]
	// numel is bounded so that numel × elem cannot overflow: no real tensor
	// has more elements than the file has bits.
	limit := int64(len(area))*8 + 1
	numel := int64(1)
	for i, d := range shape {
		if d < 0 {
			return stEntry{}, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		e.shape[i] = int(d)
		if numel != 0 && d > limit/max(numel, 1) {
			numel = limit // too large, whatever the rest says (unless a 0 follows)
		} else {
			numel *= d
		}
	}
	if numel >= limit {
		return stEntry{}, fmt.Errorf("%s shape %v needs more bytes than the file holds", e.dtype, shape)
	}
	e.numel = int(numel)
	if known && numel*int64(elem) != end-begin {
		return stEntry{}, fmt.Errorf("%s shape %v needs %d bytes, data_offsets [%d %d] hold %d",
			e.dtype, shape, numel*int64(elem), begin, end, end-begin)
	}
	return e, nil
}

// DecodeSafetensors decodes a whole safetensors file held in data. F32, F16
// and BF16 tensors are converted to float32; tensors of other dtypes keep
// their shape and DType and have no Data. The header is checked whole: it
// must be JSON, and every tensor's data_offsets must lie in the data area
// and, for a known dtype, hold exactly its shape's bytes.
func DecodeSafetensors(data []byte) (map[string]*Tensor, error) {
	entries, err := parseSafetensors(data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Tensor, len(entries))
	for name, e := range entries {
		out[name] = e.tensor()
	}
	return out, nil
}

// ReadSafetensors reads and decodes a safetensors file, as DecodeSafetensors
// does. Errors name the file.
func ReadSafetensors(path string) (map[string]*Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ts, err := DecodeSafetensors(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ts, nil
}

// WriteSafetensors writes tensors to path as an F32 safetensors file,
// atomically (a temporary file in the same folder, then a rename). The bytes
// depend only on the tensors: names are sorted, and the header is padded
// with spaces to a multiple of 8 bytes so that the data is aligned. Every
// tensor must have Data of its shape's length.
func WriteSafetensors(path string, tensors map[string]*Tensor) error {
	if err := writeSafetensors(path, tensors); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeSafetensors(path string, tensors map[string]*Tensor) error {
	names := make([]string, 0, len(tensors))
	for name, t := range tensors {
		switch {
		case name == "__metadata__":
			return fmt.Errorf("tensor name %q is reserved", name)
		case t == nil:
			return fmt.Errorf("tensor %q is nil", name)
		case !slices.Contains(floatDTypes, t.DType):
			return fmt.Errorf("tensor %q has dtype %s and no float values", name, t.DType)
		case slices.ContainsFunc(t.Shape, func(d int) bool { return d < 0 }):
			return fmt.Errorf("tensor %q has shape %v", name, t.Shape)
		case len(t.Data) != t.Len():
			return fmt.Errorf("tensor %q has %d values for shape %v", name, len(t.Data), t.Shape)
		}
		names = append(names, name)
	}
	slices.Sort(names)

	hdr := []byte{'{'}
	var off int64
	for i, name := range names {
		t := tensors[name]
		if i > 0 {
			hdr = append(hdr, ',')
		}
		q, _ := json.Marshal(name) // a string always marshals
		hdr = append(hdr, q...)
		hdr = append(hdr, `:{"dtype":"F32","shape":[`...)
		for j, d := range t.Shape {
			if j > 0 {
				hdr = append(hdr, ',')
			}
			hdr = strconv.AppendInt(hdr, int64(d), 10)
		}
		hdr = append(hdr, `],"data_offsets":[`...)
		hdr = strconv.AppendInt(hdr, off, 10)
		hdr = append(hdr, ',')
		off += 4 * int64(len(t.Data))
		hdr = strconv.AppendInt(hdr, off, 10)
		hdr = append(hdr, "]}"...)
	}
	hdr = append(hdr, '}')
	for len(hdr)%8 != 0 {
		hdr = append(hdr, ' ')
	}
	return writeAtomic(path, func(w *bufio.Writer) error {
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], uint64(len(hdr)))
		w.Write(buf[:])
		w.Write(hdr)
		for _, name := range names {
			for _, v := range tensors[name].Data {
				binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(v))
				w.Write(buf[:4])
			}
		}
		return nil // bufio.Writer keeps its first error for Flush
	})
}

// writeAtomic writes a file through write into a temporary file next to
// path, syncs it and renames it over path, so that a reader sees the old
// file or the new one, never a part.
func writeAtomic(path string, write func(w *bufio.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err = write(w); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
