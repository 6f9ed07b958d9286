package ortrun_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/ortrun"
)

// TestWriteIDX: the files read back, with the datasets package's own IDX
// reader, as the same images and labels.
func TestWriteIDX(t *testing.T) {
	for _, c := range []int{1, 3} {
		ds := datasets.Synthetic(7, c, 5, 4, 3, 1)
		dir := t.TempDir()
		if err := ortrun.WriteIDX(dir, ds); err != nil {
			t.Fatal(err)
		}
		if c == 3 {
			// IDX of 4 dimensions is what ort_ref.js reads for colour
			// images; the datasets reader takes MNIST's 3 only.
			continue
		}
		back, err := datasets.LoadIDXClasses(filepath.Join(dir, "t10k-images-idx3-ubyte"), filepath.Join(dir, "t10k-labels-idx1-ubyte"), 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Images, ds.Images) || !slices.Equal(back.Labels, ds.Labels) {
			t.Error("images or labels differ after the round trip")
		}
	}
	ds := datasets.Synthetic(2, 1, 2, 2, 2, 1)
	if err := ds.Normalize([]float32{0.5}, []float32{0.2}); err != nil {
		t.Fatal(err)
	}
	if err := ortrun.WriteIDX(t.TempDir(), ds); err == nil {
		t.Error("a normalised set was written")
	}
}

func TestReadLogits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "7.f32"), []byte{0, 0, 128, 63, 0, 0, 0, 192}, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := ortrun.ReadLogits(dir, 7, 1, 2)
	if err != nil || !slices.Equal(v, []float32{1, -2}) {
		t.Errorf("ReadLogits: %v, %v; want [1 -2]", v, err)
	}
	if _, err := ortrun.ReadLogits(dir, 7, 2, 2); err == nil || !strings.Contains(err.Error(), "8 bytes, want 16") {
		t.Errorf("short file: %v", err)
	}
}

func TestFindUnavailable(t *testing.T) {
	t.Setenv(ortrun.EnvNodePath, t.TempDir())
	_, err := ortrun.Find(context.Background(), "../bench")
	if err == nil {
		t.Skip("node loads onnxruntime-node from elsewhere (a global install)")
	}
	if !errors.Is(err, ortrun.ErrUnavailable) {
		t.Errorf("Find with an empty node_modules: %v, want ErrUnavailable", err)
	}
	_, err = ortrun.Find(context.Background(), t.TempDir())
	if !errors.Is(err, ortrun.ErrUnavailable) {
		t.Errorf("Find without ort_ref.js: %v, want ErrUnavailable", err)
	}
}
