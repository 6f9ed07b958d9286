package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"runtime"
	"strings"
	"testing"
)

// The fuzz targets feed any bytes to the decoders as a file's content, raw
// or gzipped. The decoders must not panic, must fail with an error that
// names the file, and must allocate in proportion to the data the bytes
// really hold, whatever their header claims.

func fuzzGzip(data []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func fuzzHeader(words ...uint32) []byte {
	var b []byte
	for _, w := range words {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// content returns how many bytes data holds once decompressed (data itself
// when it is not gzip).
func content(data []byte) uint64 {
	if !isGzip(data) {
		return uint64(len(data))
	}
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0
	}
	n, _ := io.Copy(io.Discard, z)
	return uint64(n)
}

// checkAlloc runs decode and fails t if it allocated more than perByte
// bytes per byte of content, beyond the first buffer (hint) and a slack for
// the gzip reader.
func checkAlloc(t *testing.T, data []byte, perByte uint64, decode func() error) {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	err := decode()
	runtime.ReadMemStats(&b)
	bound := perByte*content(data) + uint64(len(data))*hintRatio + 1<<20
	if got := b.TotalAlloc - a.TotalAlloc; got > bound {
		t.Fatalf("allocated %d bytes for %d bytes (%d of content), bound %d", got, len(data), content(data), bound)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "datasets: fuzz-file: ") {
		t.Fatalf("error %q does not name the file", err)
	}
}

func FuzzIDXImages(f *testing.F) {
	good := append(fuzzHeader(IDXImagesMagic, 2, 3, 2), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	for _, seed := range [][]byte{
		good, fuzzGzip(good), good[:20], append(good, 0),
		fuzzHeader(IDXImagesMagic, 1_000_000, 28, 28),
		fuzzGzip(fuzzHeader(IDXImagesMagic, 0xffffffff, 0xffff, 0xffff)),
		fuzzHeader(IDXLabelsMagic, 3), fuzzHeader(0x00000d03, 1, 1, 1), nil, {0x1f, 0x8b},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var img idxImages
		checkAlloc(t, data, 2, func() (err error) {
			img, err = decodeIDXImages("fuzz-file", data)
			return err
		})
		if img.pixels != nil {
			if len(img.pixels) != img.n*img.rows*img.cols || img.n < 1 || img.rows < 1 || img.cols < 1 {
				t.Fatalf("%d pixels for %d images of %d×%d", len(img.pixels), img.n, img.rows, img.cols)
			}
			d := newDataset("fuzz", 1, img.rows, img.cols, 10, img.pixels, make([]byte, img.n), img.n, nil, nil)
			for i, v := range d.Images {
				if v != float32(img.pixels[i])/255 {
					t.Fatalf("value %d is %v for pixel %d", i, v, img.pixels[i])
				}
			}
		}
	})
}

func FuzzIDXLabels(f *testing.F) {
	good := append(fuzzHeader(IDXLabelsMagic, 4), 0, 9, 3, 1)
	for _, seed := range [][]byte{
		good, fuzzGzip(good), good[:10], append(good, 0), append(fuzzHeader(IDXLabelsMagic, 2), 0, 10),
		fuzzHeader(IDXLabelsMagic, 0xffffffff), fuzzGzip(fuzzHeader(IDXLabelsMagic, 0xffffffff)),
		fuzzHeader(IDXImagesMagic, 1, 1, 1), nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var labels []byte
		checkAlloc(t, data, 2, func() (err error) {
			labels, err = decodeIDXLabels("fuzz-file", data, 10)
			return err
		})
		for i, l := range labels {
			if l >= 10 {
				t.Fatalf("label %d is %d", i, l)
			}
		}
	})
}

func FuzzCIFAR10(f *testing.F) {
	rec := make([]byte, CIFARRecord)
	for i := range rec {
		rec[i] = byte(i * 7 % 10)
	}
	two := append(bytes.Clone(rec), rec...)
	for _, seed := range [][]byte{
		rec, two, fuzzGzip(two), two[:5000], append(bytes.Clone(rec), 1), nil, {10}, fuzzGzip(nil),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var pixels, labels []byte
		checkAlloc(t, data, 4, func() (err error) {
			pixels, labels, err = decodeCIFAR10("fuzz-file", data)
			return err
		})
		if labels != nil {
			if len(pixels) != len(labels)*cifarPixels || uint64(len(labels)*CIFARRecord) != content(data) {
				t.Fatalf("%d labels and %d pixels from %d bytes of content", len(labels), len(pixels), content(data))
			}
			for i, l := range labels {
				if l >= 10 {
					t.Fatalf("label %d is %d", i, l)
				}
			}
		}
	})
}
