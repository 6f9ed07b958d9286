package cluster_test

import (
	"testing"

	"github.com/neateval/neateval/cluster"
)

// FuzzParseItem: an item message from the broker never panics the worker,
// and an accepted one has what a worker needs.
func FuzzParseItem(f *testing.F) {
	f.Add([]byte(`{"run":"sha256:ab","id":"ab.x.0","population":"sha256-cd","indexes":[0,1]}`))
	f.Add([]byte(`{"indexes":[-1]}`))
	f.Add([]byte(`{"run":"sha256:ab","id":"ab.x.1","population":"p","indexes":[2],"sample":{"size":0,"seed":3}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		it, err := cluster.ParseItem(data)
		if err != nil {
			return
		}
		if it.ID == "" || it.Run == "" || it.Population == "" || len(it.Indexes) == 0 || (it.Sample != nil && it.Sample.Size < 1) {
			t.Fatalf("accepted an incomplete item: %+v", it)
		}
	})
}

// FuzzParseResults: a results message never panics the coordinator, and
// every accepted line's index lies in the population.
func FuzzParseResults(f *testing.F) {
	f.Add([]byte(`{"genome_id":3,"index":1,"fitness":0.5,"accuracy":0.5,"loss":1.2,"images":10,"error":null,"params":4,"flops":8,"seconds":0.1}` + "\n"))
	f.Add([]byte(`{"genome_id":3,"index":9}`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := cluster.ParseResults(data, 4)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Index < 0 || r.Index >= 4 {
				t.Fatalf("accepted index %d", r.Index)
			}
		}
	})
}
