package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/neateval/neateval/results"
)

// Names on the broker. Every neateval coordinator and worker of one NATS
// account shares them; runs are told apart by the run id in the subjects.
const (
	ItemsStream    = "NEATEVAL_ITEMS"   // work queue of items, subjects ItemsPrefix+run
	ResultsStream  = "NEATEVAL_RESULTS" // results, subjects ResultsPrefix+run
	WorkersName    = "neateval-workers" // the durable pull consumer every worker shares
	WeightsBucket  = "neateval-populations"
	ItemsPrefix    = "neateval.items."
	ResultsPrefix  = "neateval.results."
	NotesPrefix    = "neateval.notes."  // core NATS: a worker's failure or refusal of an item
	HeartbeatTopic = "neateval.workers" // core NATS: each worker's heartbeat
	maxDeliveries  = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + ItemsStream + "." + WorkersName
)

// Message headers of a results message.
const (
	HeaderWorker     = "Neateval-Worker"
	HeaderItem       = "Neateval-Item"
	HeaderDeliveries = "Neateval-Deliveries"
	// HeaderFailed, on a results message without lines, is why the item
	// failed on its last delivery.
	HeaderFailed = "Neateval-Failed"
)

// Identity is what a worker must share with the coordinator to score its
// items: a worker of another version or population format, or with another
// data set or fitness, refuses them (its scores would not be the run's).
type Identity struct {
	Version string `json:"version"` // neateval's (run.Version)
	Format  string `json:"format"`  // the population format's (neat.FormatV1)
	Dataset string `json:"dataset"` // the validation set's ds.Identity()
	// Data is the data set's ds.Digest(): its pixels as scored, so that a
	// worker whose copy has the same name and size but other images (other
	// files, another dataset.mean or std) refuses rather than mis-scores.
	Data    string `json:"data"`
	Fitness string `json:"fitness"` // the fitness function's name
}

// Mismatch says how item identity want differs from have, "" when it does
// not.
func (have Identity) Mismatch(want Identity) string {
	var diffs []string
	if have.Version != want.Version {
		diffs = append(diffs, fmt.Sprintf("neateval version %s, the run's is %s", have.Version, want.Version))
	}
	if have.Format != want.Format {
		diffs = append(diffs, fmt.Sprintf("population format %s, the run's is %s", have.Format, want.Format))
	}
	if have.Dataset != want.Dataset {
		diffs = append(diffs, fmt.Sprintf("data set %q, the run's is %q", have.Dataset, want.Dataset))
	}
	if have.Data != want.Data && have.Dataset == want.Dataset {
		diffs = append(diffs, fmt.Sprintf("data set %q of other images (digest %s, the run's is %s)", have.Dataset, short(have.Data), short(want.Data)))
	}
	if have.Fitness != want.Fitness {
		diffs = append(diffs, fmt.Sprintf("fitness %q, the run's is %q", have.Fitness, want.Fitness))
	}
	return strings.Join(diffs, "; ")
}

// Item is one work item: some genomes of a stored population to score.
type Item struct {
	Identity
	Run        string `json:"run"`        // the run id (results.Header.RunID)
	ID         string `json:"id"`         // unique per coordinator session: the results' message id
	Population string `json:"population"` // the object store key of the item's genomes (a population file pair)
	Indexes    []int  `json:"indexes"`    // genome positions in the population
	// Sample, when set, scores the genomes on a sample of the data set
	// instead of all of it.
	Sample *Sample `json:"sample,omitempty"`
}

// Sample is the part of a data set an item is scored on: the Size images
// that datasets.Dataset.Sample draws with Seed. `neateval evolve` scores
// each generation on one (evolve.val_batch), so every worker draws the
// same images from its own copy of the data set.
type Sample struct {
	Size int   `json:"size"`
	Seed int64 `json:"seed"`
}

// String names the sample in run ids and messages.
func (s *Sample) String() string {
	if s == nil {
		return "all images"
	}
	return fmt.Sprintf("sample of %d images, seed %d", s.Size, s.Seed)
}

// maxItemBytes bounds an item message a worker accepts.
const maxItemBytes = 1 << 24

// ParseItem decodes an item message and checks it is usable.
func ParseItem(data []byte) (*Item, error) {
	if len(data) > maxItemBytes {
		return nil, fmt.Errorf("item of %d bytes: more than %d", len(data), maxItemBytes)
	}
	var it Item
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, fmt.Errorf("item: %w", err)
	}
	switch {
	case it.ID == "" || it.Run == "" || it.Population == "":
		return nil, fmt.Errorf("item %q: id, run and population are required", it.ID)
	case len(it.Indexes) == 0:
		return nil, fmt.Errorf("item %q: no genome indexes", it.ID)
	}
	if it.Sample != nil && it.Sample.Size < 1 {
		return nil, fmt.Errorf("item %q: sample of %d images", it.ID, it.Sample.Size)
	}
	for _, i := range it.Indexes {
		if i < 0 {
			return nil, fmt.Errorf("item %q: negative genome index %d", it.ID, i)
		}
	}
	return &it, nil
}

// Note is what a worker says about an item it could not score this time
// (Refused: its identity differs; otherwise the scoring failed).
type Note struct {
	Item       string `json:"item"`
	Worker     string `json:"worker"`
	Cause      string `json:"cause"`
	Refused    bool   `json:"refused"`
	Deliveries int    `json:"deliveries"`
}

// Heartbeat is a worker's periodic sign of life.
type Heartbeat struct {
	Worker string    `json:"worker"`
	Time   time.Time `json:"time"`
}

// encodeResults is a results message: one results-file line per genome.
func encodeResults(rs []results.Result) ([]byte, error) {
	var b []byte
	for i := range rs {
		line, err := json.Marshal(&rs[i])
		if err != nil {
			return nil, err
		}
		b = append(append(b, line...), '\n')
	}
	return b, nil
}

// ParseResults decodes a results message and checks each line against a
// population of n genomes.
func ParseResults(data []byte, n int) ([]results.Result, error) {
	var out []results.Result
	if len(data) == 0 {
		return nil, nil
	}
	for k, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var r results.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("results message, line %d: %w", k+1, err)
		}
		if err := r.Check(n); err != nil {
			return nil, fmt.Errorf("results message, line %d: %w", k+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// short is a digest's first 12 hex digits.
func short(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(len(d), 12)]
}

// runToken is the run id as a subject token (no colon).
func runToken(run string) string { return strings.TrimPrefix(run, "sha256:") }
