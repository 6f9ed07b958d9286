package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The golden tests pin what users and their tools see of the commands: the
// log events with their field keys, and the results file. A refactoring
// must leave both as they are; a deliberate change updates the golden files
// (go test ./cmd/neateval -run Golden -update) in the same commit as the
// schema document.

// goldenRuns are the command lines whose output is pinned, each run in a
// fresh folder. They cover the events of a plain run, a resumed run, a run
// on a device too small for the default batch, and an evolve run.
var goldenRuns = []struct {
	name   string
	config string
	args   [][]string // commands run in turn in the same folder
}{
	{"run", "", [][]string{{"run", "--limit", "300", "--log-level", "debug"}}},
	{"resume", "", [][]string{{"run", "--limit", "300"}, {"run", "--limit", "300", "--resume"}}},
	{"small-device", "[vram]\nmemory_bytes = \"12MiB\"\n", [][]string{{"run", "--limit", "2000", "--log-level", "debug"}}},
	{"evolve", "[evolve]\ngenerations = 2\npopulation_size = 8\nval_size = 200\n[dataset]\nlimit = 200\n", [][]string{{"evolve"}}},
}

func TestGoldenEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("scores real MNIST images (seconds)")
	}
	events := map[string][]string{} // event → sorted field keys, over every run
	for _, gr := range goldenRuns {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(cfg, []byte(gr.config), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range gr.args {
			args = append(slices.Clone(args), "--config", cfg, "--log-format", "json")
			if args[0] == "run" {
				args = append(args, "--results", filepath.Join(dir, "results.jsonl"), "--progress", "off")
			}
			var stdout, stderr bytes.Buffer
			wd, _ := os.Getwd()
			if err := os.Chdir(dir); err != nil {
				t.Fatal(err)
			}
			err := runMain(context.Background(), args, &stdout, &stderr)
			os.Chdir(wd)
			if err != nil {
				t.Fatalf("%s: %v: %v\n%s", gr.name, args, err, stderr.String())
			}
			collectEvents(t, gr.name, stderr.Bytes(), events)
		}
		if gr.name == "run" {
			checkGolden(t, "results.golden.jsonl", resultsWithoutSeconds(t, filepath.Join(dir, "results.jsonl")))
		}
	}
	var sb strings.Builder
	names := make([]string, 0, len(events))
	for n := range events {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sb.WriteString(n + ": " + strings.Join(events[n], " ") + "\n")
	}
	checkGolden(t, "events.golden", []byte(sb.String()))
}

// collectEvents adds the field keys of every JSON log line to events, by
// event name; the keys every line has are left out.
func collectEvents(t *testing.T, run string, log []byte, events map[string][]string) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: log line %q: %v", run, sc.Text(), err)
		}
		ev, _ := line["event"].(string)
		if ev == "" {
			t.Fatalf("%s: log line without an event: %s", run, sc.Text())
		}
		for k := range line {
			switch k {
			case "time", "level", "event", "message":
				continue
			}
			if !slices.Contains(events[ev], k) {
				events[ev] = append(events[ev], k)
			}
		}
		if _, ok := events[ev]; !ok {
			events[ev] = []string{}
		}
		sort.Strings(events[ev])
	}
}

// resultsWithoutSeconds is a results file with each line's "seconds" (wall
// time, different every run) removed.
func resultsWithoutSeconds(t *testing.T, path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		i := bytes.Index(line, []byte(`,"seconds":`))
		if i < 0 {
			t.Fatalf("result line without seconds: %s", line)
		}
		out.Write(line[:i])
		out.WriteString("}\n")
	}
	return out.Bytes()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
