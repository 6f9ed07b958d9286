package datasets

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
)

// IDX magic numbers: two zero bytes, the data type (0x08, unsigned byte) and
// the number of dimensions.
const (
	IDXImagesMagic = 0x00000803 // N × rows × cols unsigned bytes
	IDXLabelsMagic = 0x00000801 // N unsigned bytes
)

// idxUByte is the IDX data type of unsigned bytes.
const idxUByte = 0x08

// mnistClasses is the number of classes of MNIST and Fashion-MNIST, the
// default for IDX files.
const mnistClasses = 10

// idxImages is the decoded content of an IDX images file.
type idxImages struct {
	n, rows, cols int
	pixels        []byte // n*rows*cols
}

// checkIDXMagic checks the 4-byte magic number m of file name, which must
// be want (IDXImagesMagic or IDXLabelsMagic).
func checkIDXMagic(name string, m []byte, want uint32) error {
	got := binary.BigEndian.Uint32(m)
	if got == want {
		return nil
	}
	kind, other, otherKind := "images", uint32(IDXLabelsMagic), "labels"
	if want == IDXLabelsMagic {
		kind, other, otherKind = "labels", IDXImagesMagic, "images"
	}
	prefix := fmt.Sprintf("datasets: %s: magic number 0x%08x, want 0x%08x for an IDX %s file", name, got, want, kind)
	switch {
	case got == other:
		return fmt.Errorf("%s: %w: this is an IDX %s file", prefix, ErrMagic, otherKind)
	case m[0] != 0 || m[1] != 0:
		return fmt.Errorf("%s: %w: not an IDX file", prefix, ErrMagic)
	case m[2] != idxUByte:
		return fmt.Errorf("%s: %w: data type 0x%02x, want 0x08 (unsigned byte)", prefix, ErrMagic, m[2])
	default:
		return fmt.Errorf("%s: %w: %d dimensions, want %d", prefix, ErrDims, m[3], byte(want))
	}
}

// decodeIDXImages decodes the IDX images file name, whose bytes (raw or
// gzipped) are raw.
func decodeIDXImages(name string, raw []byte) (idxImages, error) {
	src, err := newSource(name, raw)
	if err != nil {
		return idxImages{}, err
	}
	m, err := src.header(4)
	if err != nil {
		return idxImages{}, err
	}
	if err := checkIDXMagic(name, m, IDXImagesMagic); err != nil {
		return idxImages{}, err
	}
	h, err := src.header(12)
	if err != nil {
		return idxImages{}, err
	}
	n := uint64(binary.BigEndian.Uint32(h[0:]))
	rows := uint64(binary.BigEndian.Uint32(h[4:]))
	cols := uint64(binary.BigEndian.Uint32(h[8:]))
	if n == 0 {
		return idxImages{}, fmt.Errorf("datasets: %s: %w: the header declares 0 images", name, ErrEmpty)
	}
	if rows == 0 || cols == 0 {
		return idxImages{}, fmt.Errorf("datasets: %s: %w: images of %d×%d pixels", name, ErrDims, rows, cols)
	}
	size, ok := mul(n, rows, cols)
	pixels, err := src.body(size, ok, fmt.Sprintf("%d images of %d×%d", n, rows, cols))
	if err != nil {
		return idxImages{}, err
	}
	return idxImages{n: int(n), rows: int(rows), cols: int(cols), pixels: pixels}, nil
}

// decodeIDXLabels decodes the IDX labels file name, whose bytes (raw or
// gzipped) are raw, and checks every label is below classes.
func decodeIDXLabels(name string, raw []byte, classes int) ([]byte, error) {
	src, err := newSource(name, raw)
	if err != nil {
		return nil, err
	}
	m, err := src.header(4)
	if err != nil {
		return nil, err
	}
	if err := checkIDXMagic(name, m, IDXLabelsMagic); err != nil {
		return nil, err
	}
	h, err := src.header(4)
	if err != nil {
		return nil, err
	}
	n := uint64(binary.BigEndian.Uint32(h))
	if n == 0 {
		return nil, fmt.Errorf("datasets: %s: %w: the header declares 0 labels", name, ErrEmpty)
	}
	labels, err := src.body(n, true, fmt.Sprintf("%d labels", n))
	if err != nil {
		return nil, err
	}
	if err := checkLabels(name, labels, classes, 8, 1); err != nil {
		return nil, err
	}
	return labels, nil
}

// checkLabels checks that labels[i] < classes for every i; label i sits at
// byte offset base+i*stride of the file name.
func checkLabels(name string, labels []byte, classes, base, stride int) error {
	for i, l := range labels {
		if int(l) >= classes {
			return fmt.Errorf("datasets: %s: %w: label %d of image %d (byte offset %d) is outside [0, %d)",
				name, ErrLabel, l, i, base+i*stride, classes)
		}
	}
	return nil
}

// LoadIDX loads an IDX images file and its IDX labels file, each gzipped or
// raw (told apart by the gzip magic number), as a data set of 10 classes
// (MNIST, Fashion-MNIST). See [LoadIDXClasses] for other class counts.
func LoadIDX(imagesPath, labelsPath string) (*Dataset, error) {
	return LoadIDXClasses(imagesPath, labelsPath, mnistClasses)
}

// LoadIDXClasses is [LoadIDX] for a data set of classes classes (1 to 256):
// every label must be below classes.
func LoadIDXClasses(imagesPath, labelsPath string, classes int) (*Dataset, error) {
	if classes < 1 || classes > 256 {
		return nil, fmt.Errorf("datasets: %d classes, want 1 to 256", classes)
	}
	name := strings.TrimSuffix(filepath.Base(imagesPath), ".gz")
	return loadIDX(name, imagesPath, labelsPath, classes, 0, 0, 0, nil, nil)
}

// loadIDX loads images and labels files; rows and cols, when not 0, are the
// image size the data set requires; the first limit images (all if 0) are
// converted, normalised with mean and std when they are not nil.
func loadIDX(name, imagesPath, labelsPath string, classes, rows, cols, limit int, mean, std []float32) (*Dataset, error) {
	raw, err := readFile(imagesPath)
	if err != nil {
		return nil, err
	}
	img, err := decodeIDXImages(imagesPath, raw)
	if err != nil {
		return nil, err
	}
	if rows != 0 && (img.rows != rows || img.cols != cols) {
		return nil, fmt.Errorf("datasets: %s: %w: images of %d×%d pixels, want %d×%d for %s",
			imagesPath, ErrDims, img.rows, img.cols, rows, cols, name)
	}
	raw, err = readFile(labelsPath)
	if err != nil {
		return nil, err
	}
	labels, err := decodeIDXLabels(labelsPath, raw, classes)
	if err != nil {
		return nil, err
	}
	if len(labels) != img.n {
		return nil, fmt.Errorf("datasets: %w: %s has %d images, %s has %d labels",
			ErrCount, imagesPath, img.n, labelsPath, len(labels))
	}
	n := img.n
	if limit > 0 {
		n = min(n, limit)
	}
	return newDataset(name, 1, img.rows, img.cols, classes, img.pixels, labels, n, mean, std), nil
}
