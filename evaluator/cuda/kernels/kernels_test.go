package kernels

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"regexp"
	"testing"
)

// TestCubins checks that each module's sm_90 cubin is an ELF image holding
// every entry point of its PTX, assembled from the committed PTX (the sum
// make kernels recorded), and that every kernel has its resources.
func TestCubins(t *testing.T) {
	res, err := Resources()
	if err != nil {
		t.Fatal(err)
	}
	sums, err := CubinSources()
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`\.visible \.entry ([A-Za-z0-9_]+)\(`)
	for _, m := range Modules {
		sum := sha256.Sum256([]byte(m.PTX))
		if got := hex.EncodeToString(sum[:]); sums[m.Name] != got {
			t.Errorf("module %s: cubin made from PTX %.12s, the PTX is %.12s: regenerate (make kernels)", m.Name, sums[m.Name], got)
		}
		// debug/elf refuses cubins (their header's version field is
		// NVIDIA's own): the magic, and each kernel's code section by name.
		if !bytes.HasPrefix(m.Cubin, []byte(elf.ELFMAG)) {
			t.Fatalf("module %s: the cubin is not an ELF image", m.Name)
		}
		for _, e := range entry.FindAllStringSubmatch(m.PTX, -1) {
			if !bytes.Contains(m.Cubin, []byte(".text."+e[1]+"\x00")) {
				t.Errorf("module %s: kernel %s is in the PTX, not in the cubin", m.Name, e[1])
			}
			if _, ok := res[e[1]]; !ok {
				t.Errorf("module %s: kernel %s has no line in resources.sm_90.txt", m.Name, e[1])
			}
		}
	}
}

func TestParseResources(t *testing.T) {
	for _, bad := range []string{"k 1 2 3", "k 1 2 3 x", "k 1 2 3 -4", "k 1 2 3 4\nk 1 2 3 4"} {
		if _, _, err := parseResources(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	r, s, err := parseResources("# c\n# ptx gemm ab\nk 40 7168 0 8\n")
	if err != nil || r["k"] != (Resource{"k", 40, 7168, 0, 8}) || s["gemm"] != "ab" {
		t.Errorf("got %v %v %v", r, s, err)
	}
}

func FuzzParseResources(f *testing.F) {
	f.Add(resourcesSM90)
	f.Fuzz(func(t *testing.T, s string) { parseResources(s) })
}
