package run_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// loggingPackages are the folders (from the module root) of the packages
// that log events.
var loggingPackages = []string{"run", "staging", "evaluator", "vram", "evaluator/cuda", "serve", "cluster"}

// docEvent is a row of docs/log-events.md.
type docEvent struct {
	pkg    string
	fields []string
}

// readSchemaDoc reads the event table of docs/log-events.md.
func readSchemaDoc(t *testing.T) map[string]docEvent {
	t.Helper()
	f, err := os.Open("../docs/log-events.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events := map[string]docEvent{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		var fields []string
		for _, f := range strings.Split(cells[4], ",") {
			fields = append(fields, strings.TrimSuffix(strings.TrimSpace(f), "⁺"))
		}
		events[name] = docEvent{pkg: strings.TrimSpace(cells[2]), fields: fields}
	}
	return events
}

// schemaConstants reads the string constants named Event… and Key… that a
// package's files declare (tests excluded, build tags ignored).
func schemaConstants(t *testing.T, dir string) (events, keys map[string]bool) {
	t.Helper()
	events, keys = map[string]bool{}, map[string]bool{}
	files, _ := filepath.Glob(filepath.Join("..", dir, "*.go"))
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Values) != len(vs.Names) {
				return true
			}
			for i, id := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				switch {
				case id.Name == "KeyEvent":
				case strings.HasPrefix(id.Name, "Event"):
					events[v] = true
				case strings.HasPrefix(id.Name, "Key"):
					keys[v] = true
				}
			}
			return true
		})
	}
	return events, keys
}

// TestLogSchemaDocumented holds docs/log-events.md to the packages'
// constants: every event declared is documented under the package that
// declares it, every event documented is declared, and every field
// documented is a key its package declares.
func TestLogSchemaDocumented(t *testing.T) {
	doc := readSchemaDoc(t)
	declared := map[string]string{}
	for _, dir := range loggingPackages {
		events, keys := schemaConstants(t, dir)
		pkg := filepath.Base(dir)
		for e := range events {
			declared[e] = pkg
			d, ok := doc[e]
			switch {
			case !ok:
				t.Errorf("event %q of %s is not in docs/log-events.md", e, dir)
			case d.pkg != pkg:
				t.Errorf("event %q: documented as logged by %s, declared by %s", e, d.pkg, dir)
			}
		}
		for e, d := range doc {
			if d.pkg != pkg {
				continue
			}
			for _, f := range d.fields {
				if !keys[f] {
					t.Errorf("event %q: field %q is not a Key constant of %s", e, f, dir)
				}
			}
		}
	}
	for e := range doc {
		if _, ok := declared[e]; !ok {
			t.Errorf("docs/log-events.md documents %q, which no package declares", e)
		}
	}
}

// TestGoldenEventsDocumented holds docs/log-events.md to what the commands
// really log: every field of every event in the commands' golden run is
// documented for that event.
func TestGoldenEventsDocumented(t *testing.T) {
	doc := readSchemaDoc(t)
	data, err := os.ReadFile("../cmd/neateval/testdata/events.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, fields, _ := strings.Cut(line, ": ")
		d, ok := doc[name]
		if !ok {
			t.Errorf("logged event %q is not documented", name)
			continue
		}
		for _, f := range strings.Fields(fields) {
			if !slices.Contains(d.fields, f) {
				t.Errorf("event %q: logged field %q is not documented", name, f)
			}
		}
	}
}
