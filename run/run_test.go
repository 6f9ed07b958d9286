package run_test

import (
	"errors"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
)

func TestEvolveDataSplit(t *testing.T) {
	cfg := config.Default()
	cfg.Dataset.Kind, cfg.Dataset.SyntheticSize = "synthetic", 500
	cfg.Evolve.ValSize = 200
	val, test, err := run.EvolveData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if val.N != 200 || test.N != 300 {
		t.Fatalf("val %d test %d", val.N, test.N)
	}
	cfg.Dataset.Limit = 100
	if _, test, _ = run.EvolveData(cfg); test.N != 100 {
		t.Errorf("dataset.limit 100: test has %d images", test.N)
	}
	cfg.Evolve.ValSize = 500
	_, _, err = run.EvolveData(cfg)
	var ve *config.ValueError
	if !errors.As(err, &ve) || ve.Key != "evolve.val_size" {
		t.Errorf("val_size of the whole set: %v", err)
	}
}
