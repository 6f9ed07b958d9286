package cluster_test

import (
	"strings"
	"testing"

	"github.com/neateval/neateval/cluster"
)

// A worker of another neateval version or population format, or with
// another data set (by name and size, or by pixels) or fitness, names the
// difference; one of the same identity has none.
func TestIdentityMismatch(t *testing.T) {
	run := cluster.Identity{Version: "v1.2.0", Format: "neateval-population/1", Dataset: "mnist-test 10000", Data: "sha256:aaaa", Fitness: "accuracy"}
	for _, c := range []struct {
		change func(*cluster.Identity)
		want   string
	}{
		{func(*cluster.Identity) {}, ""},
		{func(i *cluster.Identity) { i.Version = "v1.1.0" }, "neateval version v1.1.0, the run's is v1.2.0"},
		{func(i *cluster.Identity) { i.Format = "neateval-population/2" }, "population format neateval-population/2"},
		{func(i *cluster.Identity) { i.Dataset, i.Data = "mnist-test 9000", "sha256:bbbb" }, `data set "mnist-test 9000", the run's is "mnist-test 10000"`},
		{func(i *cluster.Identity) { i.Data = "sha256:bbbb" }, `data set "mnist-test 10000" of other images (digest bbbb, the run's is aaaa)`},
		{func(i *cluster.Identity) { i.Fitness = "neg_loss" }, `fitness "neg_loss", the run's is "accuracy"`},
	} {
		worker := run
		c.change(&worker)
		got := worker.Mismatch(run)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("worker %+v: Mismatch = %q, want %q", worker, got, c.want)
		}
	}
}
