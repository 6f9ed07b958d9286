package run_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// cadenceConfig is a short evolve run in dir checkpointed at most every
// seconds.
func cadenceConfig(dir string, seconds float64) *config.Config {
	cfg := config.Default()
	cfg.Dataset.Kind, cfg.Dataset.SyntheticSize = "synthetic", 300
	cfg.Eval.Threads = 1
	ec := &cfg.Evolve
	ec.Generations, ec.PopulationSize, ec.ValSize, ec.ValBatch = 6, 8, 150, 60
	ec.CheckpointDir, ec.Best, ec.CheckpointSeconds = filepath.Join(dir, "ck"), filepath.Join(dir, "best.json"), seconds
	return cfg
}

// dirFiles reads every file of dir.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

// cancelAt is a log writer that cancels a run once it logs the line of
// generation gen (its "gen" key).
type cancelAt struct {
	gen    string
	cancel context.CancelFunc
	lines  bytes.Buffer
}

func (c *cancelAt) Write(p []byte) (int, error) {
	if strings.Contains(string(p), `"event":"generation"`) && strings.Contains(string(p), `"gen":`+c.gen+`,`) {
		c.cancel()
	}
	return c.lines.Write(p)
}

// TestCheckpointCadence: with evolve.checkpoint_seconds longer than the
// run, no checkpoint is taken until the run ends (every generation line
// says resume_at 0), and the checkpoint it ends with is the one of a run
// checkpointed after every generation, byte for byte (history included).
// Interrupted, such a run checkpoints where it stopped, and resumed it
// ends as the uninterrupted run.
func TestCheckpointCadence(t *testing.T) {
	every, rare, cut := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := run.Evolve(context.Background(), run.EvolveSpec{Config: cadenceConfig(every, 0)}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	if _, err := run.Evolve(context.Background(), run.EvolveSpec{Config: cadenceConfig(rare, 3600), Logger: &log}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), `"resume_at":0,`); n != 6 {
		t.Errorf("%d generation lines with resume_at 0, want all 6:\n%s", n, logs.String())
	}
	sameDirs(t, dirFiles(t, filepath.Join(every, "ck")), dirFiles(t, filepath.Join(rare, "ck")))

	ctx, cancel := context.WithCancel(context.Background())
	w := &cancelAt{gen: "2", cancel: cancel}
	log = zerolog.New(w)
	_, err := run.Evolve(ctx, run.EvolveSpec{Config: cadenceConfig(cut, 3600), Logger: &log})
	var ie *run.EvolveInterruptedError
	if !errors.As(err, &ie) || ie.Generation != 3 {
		t.Fatalf("cancelled after generation 2: %v, want interrupted at generation 3", err)
	}
	evo, _, err := neat.LoadCheckpoint(filepath.Join(cut, "ck"))
	if err != nil || evo.Generation() != 3 {
		t.Fatalf("the interrupted run's checkpoint: %v, want one at generation 3", err)
	}
	if _, err := run.Evolve(context.Background(), run.EvolveSpec{Config: cadenceConfig(cut, 3600), Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameDirs(t, dirFiles(t, filepath.Join(every, "ck")), dirFiles(t, filepath.Join(cut, "ck")))
}

func sameDirs(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d files against %d", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs", name)
		}
	}
}
