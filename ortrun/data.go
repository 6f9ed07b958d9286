package ortrun

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/neateval/neateval/datasets"
)

// WriteIDX writes the images and labels of ds into dir as the MNIST test
// files (t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte) that ort_ref.js
// and torch_ref.py read. Pixels go back to bytes as round(x·255), which is
// exact for images stored as x/255; a normalised set is refused.
func WriteIDX(dir string, ds *datasets.Dataset) error {
	if ds.Mean != nil || ds.Std != nil {
		return fmt.Errorf("%s is normalised; the reference scripts read plain x/255 images", ds.Name)
	}
	var img bytes.Buffer
	dims := []uint32{uint32(ds.N), uint32(ds.Channels), uint32(ds.Height), uint32(ds.Width)}
	if ds.Channels == 1 {
		dims = []uint32{uint32(ds.N), uint32(ds.Height), uint32(ds.Width)}
	}
	img.Write([]byte{0, 0, 8, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&img, binary.BigEndian, d)
	}
	for _, v := range ds.Images[:ds.N*ds.ImageSize()] {
		img.WriteByte(byte(math.Round(float64(min(max(v, 0), 1)) * 255)))
	}
	var lab bytes.Buffer
	lab.Write([]byte{0, 0, 8, 1})
	binary.Write(&lab, binary.BigEndian, uint32(ds.N))
	lab.Write(ds.Labels[:ds.N])
	if err := os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte"), img.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), lab.Bytes(), 0o644)
}

// ReadLogits reads the logits ort_ref.js wrote for genome id into dir
// (Options.LogitsDir): images rows of classes float32 values.
func ReadLogits(dir string, id int64, images, classes int) ([]float32, error) {
	path := filepath.Join(dir, strconv.FormatInt(id, 10)+".f32")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*images*classes {
		return nil, fmt.Errorf("%s: %d bytes, want %d (%d images × %d classes × 4)", path, len(b), 4*images*classes, images, classes)
	}
	v := make([]float32, images*classes)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
