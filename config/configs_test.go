package config

import (
	"path/filepath"
	"testing"
)

// TestShippedConfigsLoad loads every config under configs/: each must be
// valid as shipped.
func TestShippedConfigsLoad(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "configs", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no configs under configs/")
	}
	for _, p := range paths {
		c, err := Load(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
