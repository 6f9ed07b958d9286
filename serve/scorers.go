package serve

import (
	"sync"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
)

// scorers keeps the scorers of the data set's first n images: the one of
// the default limit for the server's life, and the one of the last other
// limit asked for, so that a client scoring generation after generation
// with the same limit finds its images on the device each time. A scorer
// of another limit replaces that second one (closing it first, so that
// two such sets never share the device).
type scorers struct {
	ds   *datasets.Dataset
	make func(*datasets.Dataset) (evaluator.Scorer, error)

	mu    sync.Mutex
	base  *scorerFor // the first made: the default limit's
	other *scorerFor
}

type scorerFor struct {
	n  int // images
	ds *datasets.Dataset
	sc evaluator.Scorer
}

func newScorers(ds *datasets.Dataset, make func(*datasets.Dataset) (evaluator.Scorer, error)) *scorers {
	return &scorers{ds: ds, make: make}
}

// images is how many images a limit scores: limit, or all of them when 0
// or more than the set holds.
func (c *scorers) images(limit int) int { return c.ds.Limit(limit).N }

// get returns the scorer of the first limit images and that subset.
func (c *scorers) get(limit int) (evaluator.Scorer, *datasets.Dataset, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.images(limit)
	for _, s := range []*scorerFor{c.base, c.other} {
		if s != nil && s.n == n {
			return s.sc, s.ds, nil
		}
	}
	if c.other != nil {
		closeScorer(c.other.sc)
		c.other = nil
	}
	ds := c.ds.Limit(n)
	sc, err := c.make(ds)
	if err != nil {
		return nil, nil, err
	}
	s := &scorerFor{n: n, ds: ds, sc: sc}
	if c.base == nil {
		c.base = s
	} else {
		c.other = s
	}
	return sc, ds, nil
}

func (c *scorers) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range []*scorerFor{c.base, c.other} {
		if s != nil {
			closeScorer(s.sc)
		}
	}
	c.base, c.other = nil, nil
}

func closeScorer(sc evaluator.Scorer) {
	if c, ok := sc.(interface{ Close() }); ok {
		c.Close()
	}
}
