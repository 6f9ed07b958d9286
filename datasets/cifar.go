package datasets

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CIFAR-10 binary format: records of one label byte and 32×32 pixels per
// channel (all red, then all green, then all blue, each row after row).
const (
	cifarSide    = 32
	cifarPixels  = 3 * cifarSide * cifarSide // 3072
	cifarClasses = 10
)

// CIFARRecord is the size of a CIFAR-10 binary record: one label byte and
// 3×32×32 pixel bytes.
const CIFARRecord = 1 + cifarPixels

// decodeCIFAR10 decodes one CIFAR-10 binary batch file name, whose bytes
// (raw or gzipped) are raw, into its pixels (C, H, W order, image after
// image) and labels.
func decodeCIFAR10(name string, raw []byte) (pixels, labels []byte, err error) {
	src, err := newSource(name, raw)
	if err != nil {
		return nil, nil, err
	}
	var data []byte
	if src.gz == nil {
		data = raw
	} else if data, err = readAtMost(src.gz, maxBody, src.hint(maxBody)); err != nil {
		return nil, nil, src.gzipErr(err)
	}
	if len(data) == 0 {
		return nil, nil, fmt.Errorf("datasets: %s: %w: the file is empty", name, ErrEmpty)
	}
	if r := len(data) % CIFARRecord; r != 0 {
		return nil, nil, fmt.Errorf("datasets: %s: %w: %d %s is not a whole number of %d-byte records (%d records and %d bytes over)",
			name, ErrRecordSize, len(data), src.unit(), CIFARRecord, len(data)/CIFARRecord, r)
	}
	n := len(data) / CIFARRecord
	labels = make([]byte, n)
	pixels = make([]byte, n*cifarPixels)
	for i := range n {
		rec := data[i*CIFARRecord : (i+1)*CIFARRecord]
		labels[i] = rec[0]
		copy(pixels[i*cifarPixels:], rec[1:])
	}
	if err := checkLabels(name, labels, cifarClasses, 0, CIFARRecord); err != nil {
		return nil, nil, err
	}
	return pixels, labels, nil
}

// LoadCIFAR10 loads CIFAR-10 binary batch files (data_batch_1.bin …
// data_batch_5.bin, test_batch.bin), each gzipped or raw, as one data set
// of their images in the order given: 3×32×32 images, 10 classes.
func LoadCIFAR10(paths ...string) (*Dataset, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("datasets: LoadCIFAR10: %w: no files given", ErrNotFound)
	}
	name := "cifar10"
	if len(paths) == 1 {
		name = strings.TrimSuffix(filepath.Base(paths[0]), ".gz")
	}
	return loadCIFAR10(name, paths, 0, nil, nil)
}

// loadCIFAR10 loads batch files as one data set, of which it converts the
// first limit images (all if 0), normalised with mean and std when they are
// not nil.
func loadCIFAR10(name string, paths []string, limit int, mean, std []float32) (*Dataset, error) {
	var pixels, labels []byte
	for _, p := range paths {
		raw, err := readFile(p)
		if err != nil {
			return nil, err
		}
		px, lb, err := decodeCIFAR10(p, raw)
		if err != nil {
			return nil, err
		}
		if len(paths) == 1 {
			pixels, labels = px, lb
			break
		}
		pixels = append(pixels, px...)
		labels = append(labels, lb...)
	}
	n := len(labels)
	if limit > 0 {
		n = min(n, limit)
	}
	return newDataset(name, 3, cifarSide, cifarSide, cifarClasses, pixels, labels, n, mean, std), nil
}
