package datasets_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// idxImages returns an IDX images file of n images of rows×cols whose pixel
// j of image i is pixel(i, j).
func idxImages(n, rows, cols int, pixel func(i, j int) byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x00000803)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, uint32(rows))
	b = binary.BigEndian.AppendUint32(b, uint32(cols))
	for i := range n {
		for j := range rows * cols {
			b = append(b, pixel(i, j))
		}
	}
	return b
}

// idxLabels returns an IDX labels file holding labels.
func idxLabels(labels ...byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x00000801)
	b = binary.BigEndian.AppendUint32(b, uint32(len(labels)))
	return append(b, labels...)
}

// testPixel is the pixel pattern of the small IDX and CIFAR files the tests
// write.
func testPixel(i, j int) byte { return byte(i*37 + j*11) }

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// write writes data to the file name in dir and returns its path.
func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// allocated returns the bytes f allocates (the whole process's count, so
// tests that use it do not run in parallel).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
