package kernels

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestActCoefficientsMatchGenerator: the rational approximations' values in
// act.go (the pure-Go path) are the ones gen_vec.go writes into the
// assembly, so that an edit to one without the other fails here rather
// than as a silent difference between paths.
func TestActCoefficientsMatchGenerator(t *testing.T) {
	src, err := os.ReadFile("gen_vec.go")
	if err != nil {
		t.Fatal(err)
	}
	values := func(name string) []float32 {
		m := regexp.MustCompile(`(?m)^\s*` + name + `\s*=\s*(?:\[\]float64\{([^}]*)\}|([0-9.]+))`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("gen_vec.go: no %s", name)
		}
		list := string(m[1]) + string(m[2])
		var out []float32
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				t.Fatalf("gen_vec.go: %s: %v", name, err)
			}
			out = append(out, float32(v))
		}
		return out
	}
	for _, c := range []struct {
		name string
		want []float32 // act.go's, without D₀ = Q₀ = 1 (implicit in the assembly)
	}{
		{"tanhN", tanhN[:]}, {"tanhD", tanhD[1:]}, {"erfP", erfP[:]}, {"erfQ", erfQ[1:]},
		{"tanhC", []float32{tanhC}}, {"geluC", []float32{geluC}},
	} {
		got := values(c.name)
		if len(got) != len(c.want) {
			t.Fatalf("%s: gen_vec.go has %d values, act.go %d", c.name, len(got), len(c.want))
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s[%d]: gen_vec.go %v, act.go %v", c.name, i, got[i], c.want[i])
			}
		}
	}
}
