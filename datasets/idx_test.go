package datasets_test

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

func TestLoadIDX(t *testing.T) {
	dir := t.TempDir()
	images := write(t, dir, "img", idxImages(3, 2, 4, testPixel))
	labels := write(t, dir, "lbl", idxLabels(9, 0, 4))
	d, err := datasets.LoadIDX(images, labels)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "img" || d.N != 3 || d.Channels != 1 || d.Height != 2 || d.Width != 4 || d.NumClasses != 10 {
		t.Fatalf("%s: %d images of %d×%d×%d, %d classes", d.Name, d.N, d.Channels, d.Height, d.Width, d.NumClasses)
	}
	for i := range 3 {
		for j := range 8 {
			if got, want := d.Images[i*8+j], float32(testPixel(i, j))/255; got != want {
				t.Fatalf("image %d pixel %d: %v, want %v", i, j, got, want)
			}
		}
	}
	if !slices.Equal(d.Labels, []uint8{9, 0, 4}) {
		t.Errorf("labels %v", d.Labels)
	}
	d, err = datasets.LoadIDXClasses(images, labels, 12)
	if err != nil || d.NumClasses != 12 {
		t.Errorf("LoadIDXClasses(…, 12): %v, %v", d, err)
	}
	if _, err := datasets.LoadIDXClasses(images, labels, 5); !errors.Is(err, datasets.ErrLabel) {
		t.Errorf("LoadIDXClasses(…, 5): %v, want ErrLabel", err)
	}
	if _, err := datasets.LoadIDXClasses(images, labels, 0); err == nil {
		t.Errorf("LoadIDXClasses(…, 0): no error")
	}
	if _, err := datasets.LoadIDX(filepath.Join(dir, "missing"), labels); !errors.Is(err, fs.ErrNotExist) ||
		!strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}

// TestIDXErrors checks that every kind of broken IDX file gets its error,
// naming the file and what is wrong.
func TestIDXErrors(t *testing.T) {
	good := idxImages(4, 3, 5, testPixel) // 16 + 60 bytes
	labels := idxLabels(1, 2, 3, 4)       // 8 + 4 bytes
	with := func(b []byte, off int, v uint32) []byte {
		b = slices.Clone(b)
		binary.BigEndian.PutUint32(b[off:], v)
		return b
	}
	crc := gz(t, good)
	crc[len(crc)-8] ^= 1 // the CRC-32 of the gzip trailer
	for _, tc := range []struct {
		name           string
		images, labels []byte
		err            error
		bad            string // "images" or "labels": the file the error names
		msg            string
	}{
		{"labels file as images", labels, labels, datasets.ErrMagic, "images", "magic number 0x00000801, want 0x00000803 for an IDX images file: bad magic number: this is an IDX labels file"},
		{"not IDX", with(good, 0, 0x89504e47), labels, datasets.ErrMagic, "images", "not an IDX file"},
		{"float data", with(good, 0, 0x00000d03), labels, datasets.ErrMagic, "images", "data type 0x0d, want 0x08"},
		{"2 dimensions", with(good, 0, 0x00000802), labels, datasets.ErrDims, "images", "2 dimensions, want 3"},
		{"0 rows", with(good, 8, 0), labels, datasets.ErrDims, "images", "images of 0×5 pixels"},
		{"0 images", with(good, 4, 0), labels, datasets.ErrEmpty, "images", "declares 0 images"},
		{"short header", good[:10], labels, datasets.ErrTruncated, "images", "the header needs 16 bytes, the file has 10"},
		{"short magic", good[:3], labels, datasets.ErrTruncated, "images", "the header needs 4 bytes, the file has 3"},
		{"empty", nil, labels, datasets.ErrTruncated, "images", "the header needs 4 bytes, the file has 0"},
		{"short body", good[:70], labels, datasets.ErrTruncated, "images", "expected 76 bytes (16-byte header + 4 images of 3×5), got 70"},
		{"long body", append(slices.Clone(good), 0), labels, datasets.ErrTrailing, "images", "expected 76 bytes (16-byte header + 4 images of 3×5), got 77"},
		{"huge header", with(with(with(good, 4, 0xffffffff), 8, 0xffff), 12, 0xffff), labels, datasets.ErrTruncated, "images", "declares 4294967295 images of 65535×65535, more than any file holds"},
		{"gzip short body", gz(t, good[:70]), labels, datasets.ErrTruncated, "images", "expected 76 decompressed bytes (16-byte header + 4 images of 3×5), got 70"},
		{"gzip long body", gz(t, append(slices.Clone(good), 1, 2)), labels, datasets.ErrTrailing, "images", "expected 76 decompressed bytes (16-byte header + 4 images of 3×5), got 78"},
		{"gzip cut", gz(t, good)[:30], labels, datasets.ErrGzip, "images", "bad gzip stream: truncated: the compressed stream ends early"},
		{"gzip checksum", crc, labels, datasets.ErrGzip, "images", "bad gzip stream: gzip: invalid checksum"},
		{"gzip bad header", []byte{0x1f, 0x8b, 1, 2, 3}, labels, datasets.ErrGzip, "images", "bad gzip stream"},
		{"images file as labels", good, good, datasets.ErrMagic, "labels", "magic number 0x00000803, want 0x00000801 for an IDX labels file: bad magic number: this is an IDX images file"},
		{"labels 2 dimensions", good, with(labels, 0, 0x00000802), datasets.ErrDims, "labels", "2 dimensions, want 1"},
		{"0 labels", good, with(labels, 4, 0), datasets.ErrEmpty, "labels", "declares 0 labels"},
		{"short labels", good, labels[:10], datasets.ErrTruncated, "labels", "expected 12 bytes (8-byte header + 4 labels), got 10"},
		{"gzip short labels", good, gz(t, labels[:10]), datasets.ErrTruncated, "labels", "expected 12 decompressed bytes (8-byte header + 4 labels), got 10"},
		{"label out of range", good, idxLabels(1, 2, 3, 10), datasets.ErrLabel, "labels", "label 10 of image 3 (byte offset 11) is outside [0, 10)"},
		{"label 255", good, idxLabels(255, 2, 3, 4), datasets.ErrLabel, "labels", "label 255 of image 0 (byte offset 8)"},
		{"fewer labels", good, idxLabels(1, 2, 3), datasets.ErrCount, "both", "has 4 images, "},
		{"more labels", good, gz(t, idxLabels(1, 2, 3, 4, 5)), datasets.ErrCount, "both", "has 5 labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			images := write(t, dir, "images-file", tc.images)
			labels := write(t, dir, "labels-file", tc.labels)
			_, err := datasets.LoadIDX(images, labels)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "datasets: ") || !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q, want it to say %q", msg, tc.msg)
			}
			for _, f := range []string{"images", "labels"} {
				if (tc.bad == f || tc.bad == "both") != strings.Contains(msg, f+"-file") {
					t.Errorf("error %q: names the wrong file (want %s)", msg, tc.bad)
				}
			}
		})
	}
}

// TestIDXHeaderLies checks that memory follows the bytes a file holds, not
// the count its header claims.
func TestIDXHeaderLies(t *testing.T) {
	dir := t.TempDir()
	labels := write(t, dir, "labels", idxLabels(1))
	lie := idxImages(1, 28, 28, testPixel)
	binary.BigEndian.PutUint32(lie[4:], 1_000_000) // 784 MB claimed
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"raw", lie},
		{"gzip", gz(t, lie)},
		{"gzip, forged trailer", func() []byte {
			b := gz(t, lie)
			binary.LittleEndian.PutUint32(b[len(b)-4:], 0xffffffff)
			return b
		}()},
	} {
		path := write(t, dir, tc.name, tc.data)
		var err error
		n := allocated(func() { _, err = datasets.LoadIDX(path, labels) })
		if !errors.Is(err, datasets.ErrTruncated) && !errors.Is(err, datasets.ErrGzip) {
			t.Errorf("%s: error %v, want ErrTruncated", tc.name, err)
		}
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte file", tc.name, n, len(tc.data))
		}
	}
}
