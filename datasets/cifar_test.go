package datasets_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

// cifarBatch returns a CIFAR-10 binary batch of n records: label of record
// i is label(i), its byte j after the label is testPixel(first+i, j).
func cifarBatch(first, n int, label func(i int) byte) []byte {
	var b []byte
	for i := range n {
		b = append(b, label(i))
		for j := range 3072 {
			b = append(b, testPixel(first+i, j))
		}
	}
	return b
}

func byTen(i int) byte { return byte(i % 10) }

// checkCIFAR checks that d holds images first..first+n-1 of testPixel.
func checkCIFAR(t *testing.T, d *datasets.Dataset, first, n int) {
	t.Helper()
	if d.N != n || d.Channels != 3 || d.Height != 32 || d.Width != 32 || d.NumClasses != 10 || len(d.Images) != n*3072 {
		t.Fatalf("%s: %d images of %d×%d×%d, %d classes, %d values", d.Name, d.N, d.Channels, d.Height, d.Width, d.NumClasses, len(d.Images))
	}
	for i := range n {
		for j := range 3072 {
			if got, want := d.Images[i*3072+j], float32(testPixel(first+i, j))/255; got != want {
				t.Fatalf("image %d value %d (channel %d, row %d, col %d): %v, want %v", i, j, j/1024, j%1024/32, j%32, got, want)
			}
		}
	}
}

func TestLoadCIFAR10(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.bin", cifarBatch(0, 5, byTen))
	b := write(t, dir, "b.bin.gz", gz(t, cifarBatch(5, 3, func(i int) byte { return byte(9 - i) })))
	d, err := datasets.LoadCIFAR10(a, b)
	if err != nil {
		t.Fatal(err)
	}
	checkCIFAR(t, d, 0, 8)
	if want := []uint8{0, 1, 2, 3, 4, 9, 8, 7}; !slices.Equal(d.Labels, want) {
		t.Errorf("labels %v, want %v", d.Labels, want)
	}
	if d.Name != "cifar10" {
		t.Errorf("name %q", d.Name)
	}
	if d, err = datasets.LoadCIFAR10(b); err != nil || d.Name != "b.bin" {
		t.Errorf("one file: %v, %v", d, err)
	}
	if _, err := datasets.LoadCIFAR10(); !errors.Is(err, datasets.ErrNotFound) {
		t.Errorf("no files: %v", err)
	}
}

func TestCIFAR10Errors(t *testing.T) {
	good := cifarBatch(0, 3, byTen)
	for _, tc := range []struct {
		name string
		data []byte
		err  error
		msg  string
	}{
		{"one byte over", append(slices.Clone(good), 7), datasets.ErrRecordSize, "9220 bytes is not a whole number of 3073-byte records (3 records and 1 bytes over)"},
		{"short record", good[:3073*2+100], datasets.ErrRecordSize, "6246 bytes is not a whole number of 3073-byte records (2 records and 100 bytes over)"},
		{"gzip short", gz(t, good[:3000]), datasets.ErrRecordSize, "3000 decompressed bytes is not a whole number"},
		{"label 10", cifarBatch(0, 3, func(i int) byte { return byte(10 * (i / 2)) }), datasets.ErrLabel, "label 10 of image 2 (byte offset 6146) is outside [0, 10)"},
		{"empty", nil, datasets.ErrEmpty, "the file is empty"},
		{"gzip cut", gz(t, good)[:40], datasets.ErrGzip, "the compressed stream ends early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "batch-file.bin", tc.data)
			_, err := datasets.LoadCIFAR10(p)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if msg := err.Error(); !strings.Contains(msg, "batch-file.bin: ") || !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q, want it to name the file and say %q", msg, tc.msg)
			}
		})
	}
}

func TestOpenCIFAR10(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cifar-10-batches-bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for k := range 5 {
		write(t, dir, "data_batch_"+string(rune('1'+k))+".bin", cifarBatch(2*k, 2, byTen))
	}
	write(t, dir, "test_batch.bin.gz", gz(t, cifarBatch(100, 4, byTen)))
	for _, path := range []string{root, dir} {
		d, err := datasets.Open(datasets.Spec{Kind: datasets.KindCIFAR10, Path: path})
		if err != nil {
			t.Fatal(err)
		}
		checkCIFAR(t, d, 100, 4)
		if d.Name != "cifar10-test" {
			t.Errorf("name %q", d.Name)
		}
		d, err = datasets.Open(datasets.Spec{Kind: datasets.KindCIFAR10, Path: path, Split: "train", Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		checkCIFAR(t, d, 0, 7) // the batches in order
	}
	if err := os.Remove(filepath.Join(dir, "data_batch_4.bin")); err != nil {
		t.Fatal(err)
	}
	_, err := datasets.Open(datasets.Spec{Kind: datasets.KindCIFAR10, Path: root, Split: "train"})
	if !errors.Is(err, datasets.ErrNotFound) || !strings.Contains(err.Error(), "data_batch_4.bin") {
		t.Errorf("missing batch: %v", err)
	}
}
