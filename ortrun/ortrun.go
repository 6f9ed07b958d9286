package ortrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// EnvNodePath names the environment variable that, when set, is the
// node_modules folder holding onnxruntime-node. Otherwise it is looked for
// in DefaultNodePath.
const EnvNodePath = "NEATEVAL_ORT_NODE_PATH"

// ErrUnavailable is wrapped by Find's errors: node, the script or
// onnxruntime-node is not there. Tests skip on it; the bench notes it.
var ErrUnavailable = errors.New("onnxruntime unavailable")

// DefaultNodePath is where scripts/ort-deps.sh installs onnxruntime-node:
// ~/.cache/neateval/npm/node_modules (under $XDG_CACHE_HOME when set).
func DefaultNodePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "neateval", "npm", "node_modules")
}

// Runner runs bench/ort_ref.js with Node and onnxruntime-node.
type Runner struct {
	Node     string // the node binary
	Script   string // bench/ort_ref.js
	NodePath string // the node_modules folder holding onnxruntime-node
	Version  string // onnxruntime-node's version
}

// Find locates node (on PATH), the script ort_ref.js in benchDir and
// onnxruntime-node (EnvNodePath, else DefaultNodePath), and checks that
// node can load it. Its errors wrap ErrUnavailable and say what is missing.
func Find(ctx context.Context, benchDir string) (*Runner, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node is not on PATH (Debian: apt-get install nodejs)", ErrUnavailable)
	}
	script := filepath.Join(benchDir, "ort_ref.js")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	np := os.Getenv(EnvNodePath)
	if np == "" {
		np = DefaultNodePath()
	}
	r := &Runner{Node: node, Script: script, NodePath: np}
	cmd := exec.CommandContext(ctx, node, "-e", `process.stdout.write(require("onnxruntime-node/package.json").version)`)
	cmd.Env = r.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: node cannot load onnxruntime-node from %s (run scripts/ort-deps.sh, or set %s): %s",
			ErrUnavailable, np, EnvNodePath, LastLine(out, err))
	}
	r.Version = strings.TrimSpace(string(out))
	return r, nil
}

func (r *Runner) env() []string {
	return append(os.Environ(), "NODE_PATH="+r.NodePath)
}

// Options say how the script scores a population.
type Options struct {
	Threads int  // intra-op threads per session (0: 2)
	Batch   int  // images per run (0: the fastest of 64, 256 and 1024, chosen per genome on an untimed warm-up)
	Limit   int  // the first Limit images only (0: all)
	Warmup  bool // one untimed batch per genome first (implied when Batch is 0)
	// LogitsDir, when set, receives each genome's logits as
	// <genome_id>.f32, little-endian float32 [images, classes].
	LogitsDir string
}

// Summary is the last line the script prints.
type Summary struct {
	Engine  string         `json:"engine"`
	Threads int            `json:"threads"`
	Batches map[string]int `json:"batches"` // genomes per batch size chosen
	Genomes int            `json:"genomes"`
	Invalid int            `json:"invalid"`
	Images  int            `json:"images"`
	Seconds float64        `json:"seconds"` // scoring alone, summed over genomes
}

// Genome is one line of the script's results, in the population's order.
type Genome struct {
	GenomeID int64    `json:"genome_id"`
	Accuracy *float64 `json:"accuracy"`
	Loss     *float64 `json:"loss"`
	Images   int      `json:"images"`
	Error    *string  `json:"error"`
	Batch    int      `json:"batch"`
}

// OK reports whether the genome was scored with finite logits.
func (g *Genome) OK() bool { return g.Error == nil && g.Accuracy != nil && g.Loss != nil }

// Result is a population scored by onnxruntime.
type Result struct {
	Summary
	Genomes []Genome
}

// Run scores the models of modelDir (onnxexport.WritePopulation's folder)
// on the MNIST-style IDX files in dataDir (see WriteIDX).
func (r *Runner) Run(ctx context.Context, modelDir, dataDir string, o Options) (*Result, error) {
	res, err := os.CreateTemp("", "ort-results-*.jsonl")
	if err != nil {
		return nil, err
	}
	res.Close()
	defer os.Remove(res.Name())
	threads := o.Threads
	if threads == 0 {
		threads = 2
	}
	args := []string{r.Script, modelDir, dataDir, "--threads", strconv.Itoa(threads), "--results", res.Name()}
	if o.Batch > 0 {
		args = append(args, "--batch", strconv.Itoa(o.Batch))
	}
	if o.Limit > 0 {
		args = append(args, "--limit", strconv.Itoa(o.Limit))
	}
	if o.Warmup {
		args = append(args, "--warmup")
	}
	if o.LogitsDir != "" {
		args = append(args, "--logits", o.LogitsDir)
	}
	cmd := exec.CommandContext(ctx, r.Node, args...)
	cmd.Env = r.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ort_ref.js: %s", LastLine(stderr.Bytes(), err))
	}
	var sum Summary
	if err := json.Unmarshal(LastLine(out, nil), &sum); err != nil {
		return nil, fmt.Errorf("ort_ref.js printed %q: %w", LastLine(out, nil), err)
	}
	gs, err := readResults(res.Name())
	if err != nil {
		return nil, err
	}
	return &Result{Summary: sum, Genomes: gs}, nil
}

func readResults(path string) ([]Genome, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var gs []Genome
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var g Genome
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			return nil, fmt.Errorf("ort_ref.js results, line %d: %w", line, err)
		}
		gs = append(gs, g)
	}
	return gs, sc.Err()
}

// LastLine is the last non-empty line of a peer script's output, or err's text when there is
// none.
func LastLine(out []byte, err error) []byte {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return []byte(l)
	}
	if err != nil {
		return []byte(err.Error())
	}
	return nil
}
