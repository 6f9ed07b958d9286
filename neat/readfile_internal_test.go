package neat

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadLarge: readLarge gives a file's bytes as os.ReadFile does, for
// files below and above the size where it asks for huge pages, at every
// offset of a huge page's end.
func TestReadLarge(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4096, 4*hugePage - 1, 4*hugePage + 12345} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*7 + i>>11)
		}
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readLarge(p)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: readLarge differs from the file (%d bytes read)", n, len(got))
		}
	}
	if _, err := readLarge(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("a missing file: %v, want a not-exist error", err)
	}
}
