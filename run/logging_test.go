package run

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

var rfc3339ms = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$`)

// jsonLines parses every line of out as a JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %d is not JSON: %q: %v", i+1, line, err)
		}
		objs = append(objs, m)
	}
	return objs
}

// checkSchema checks the fields every log line has.
func checkSchema(t *testing.T, objs []map[string]any) {
	t.Helper()
	for i, m := range objs {
		ev, _ := m[KeyEvent].(string)
		if ev == "" {
			t.Errorf("line %d has no event: %v", i+1, m)
		}
		if ts, _ := m["time"].(string); !rfc3339ms.MatchString(ts) {
			t.Errorf("line %d: time %q is not RFC 3339 with milliseconds", i+1, m["time"])
		}
		if _, ok := m["level"].(string); !ok {
			t.Errorf("line %d has no level", i+1)
		}
	}
}

func TestNewLoggerJSON(t *testing.T) {
	for _, format := range []string{"json", "auto"} { // a buffer is not a terminal: auto is json
		var buf bytes.Buffer
		l := NewLogger(format, "info", &buf)
		event(&l, zerolog.InfoLevel, EventRunStart).Int(KeyGenomes, 64).Msg("hello")
		event(&l, zerolog.DebugLevel, "genome_done").Msg("filtered out at info")
		event(&l, zerolog.ErrorLevel, EventRunFailed).Str(KeyError, "boom").Send()
		objs := jsonLines(t, buf.String())
		if len(objs) != 2 {
			t.Fatalf("%s: %d lines, want 2:\n%s", format, len(objs), buf.String())
		}
		checkSchema(t, objs)
		if objs[0][KeyEvent] != EventRunStart || objs[0][KeyGenomes] != 64.0 || objs[0]["message"] != "hello" || objs[0]["level"] != "info" {
			t.Errorf("%s: first line %v", format, objs[0])
		}
		if objs[1][KeyEvent] != EventRunFailed || objs[1]["level"] != "error" {
			t.Errorf("%s: second line %v", format, objs[1])
		}
	}
}

func TestNewLoggerLevels(t *testing.T) {
	for _, tt := range []struct {
		level string
		lines int
	}{{"trace", 5}, {"debug", 4}, {"info", 3}, {"warn", 2}, {"error", 1}, {"", 3}} {
		var buf bytes.Buffer
		l := NewLogger("json", tt.level, &buf)
		for _, lvl := range []zerolog.Level{zerolog.TraceLevel, zerolog.DebugLevel, zerolog.InfoLevel, zerolog.WarnLevel, zerolog.ErrorLevel} {
			event(&l, lvl, EventRunStart).Send()
		}
		if n := strings.Count(buf.String(), "\n"); n != tt.lines {
			t.Errorf("level %q: %d lines, want %d", tt.level, n, tt.lines)
		}
	}
}

func TestNewLoggerConsole(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger("console", "info", &buf)
	event(&l, zerolog.InfoLevel, EventResume).Int("chunk", 3).Msg("chunk done")
	out := buf.String()
	// Not a terminal: no colour codes; the event name follows the level and
	// is not repeated among the fields.
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour on a non-terminal: %q", out)
	}
	if !regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} INF resume chunk done chunk=3\n$`).MatchString(out) {
		t.Errorf("console line %q", out)
	}
}
