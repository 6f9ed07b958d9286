package datasets_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

func TestSampleAndSubset(t *testing.T) {
	d := datasets.Synthetic(100, 1, 4, 4, 3, 1)
	drawn, rest := d.Sample(30, 7)
	if len(drawn) != 30 || len(rest) != 70 || !slices.IsSorted(drawn) || !slices.IsSorted(rest) {
		t.Fatalf("drawn %d, rest %d", len(drawn), len(rest))
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(drawn), rest...)))
	for i, x := range all {
		if x != i {
			t.Fatalf("drawn and rest do not partition the set: %v", all)
		}
	}
	// The draw is part of every sampled evolve run's results and of its
	// checkpoints: the first n of the seed's permutation, whatever the
	// code that orders them.
	perm := rand.New(rand.NewPCG(7, 0x76616c)).Perm(100)
	if want := slices.Sorted(slices.Values(perm[:30])); !slices.Equal(drawn, want) {
		t.Fatalf("drawn %v, want the permutation's first 30 %v", drawn, want)
	}
	again, _ := d.Sample(30, 7)
	other, _ := d.Sample(30, 8)
	if !slices.Equal(drawn, again) || slices.Equal(drawn, other) {
		t.Error("the draw does not follow the seed")
	}
	s := d.Subset(drawn, "val")
	if s.N != 30 || s.Name != "val" || s.Identity() != "val 30" {
		t.Fatalf("subset %s, %d images", s.Name, s.N)
	}
	for k, i := range drawn {
		if !slices.Equal(s.Image(k), d.Image(i)) || s.Labels[k] != d.Labels[i] {
			t.Fatalf("image %d of the subset is not image %d", k, i)
		}
	}
	if all, _ := d.Sample(500, 1); len(all) != 100 {
		t.Errorf("n above N: %d drawn", len(all))
	}
}

// Digest tells apart sets of the same name and size whose pixels or labels
// differ, and is the same for equal contents.
func TestDigest(t *testing.T) {
	a := datasets.Synthetic(50, 1, 8, 8, 10, 1)
	b := *a
	b.Images, b.Labels = slices.Clone(a.Images), slices.Clone(a.Labels)
	if a.Digest() != b.Digest() || !strings.HasPrefix(a.Digest(), "sha256:") {
		t.Fatalf("equal sets: digests %s and %s", a.Digest(), b.Digest())
	}
	b.Images[len(b.Images)-1] += 1e-6
	if a.Digest() == b.Digest() {
		t.Error("a pixel changed, the digest did not")
	}
	b.Images[len(b.Images)-1] = a.Images[len(a.Images)-1]
	b.Labels[0] = (b.Labels[0] + 1) % 10
	if a.Digest() == b.Digest() {
		t.Error("a label changed, the digest did not")
	}
}
