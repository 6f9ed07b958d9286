package serve

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/neateval/neateval/neat"
)

// loadAllowed loads the population at rel, a path relative to one of the
// allowed folders (absolute, links resolved), tried in order, and its
// weights file, which must lie in the same folder. Files are named in
// messages by their paths relative to the folder, never by the server's
// absolute paths.
func loadAllowed(rel string, allow []string) (*neat.Population, string, *httpError) {
	if len(allow) == 0 {
		return nil, "", errorf(http.StatusForbidden, "population paths are not enabled (start the service with --allow-dir)")
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(rel) || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, "", outside(rel)
	}
	if !strings.HasSuffix(clean, ".json") {
		return nil, "", errorf(http.StatusBadRequest, "path %q: want a population .json file", rel)
	}
	for _, dir := range allow {
		real, herr := resolveIn(dir, clean, rel)
		if herr != nil {
			return nil, "", herr
		}
		if real != "" {
			return loadPair(dir, real, rel)
		}
	}
	return nil, "", errorf(http.StatusNotFound, "population %q not found", rel)
}

func outside(rel string) *httpError {
	return errorf(http.StatusForbidden, "path %q is outside the allowed folders", rel)
}

// resolveIn resolves dir/clean with its links: "" when there is no such
// regular file, a 403 when it resolves outside dir.
func resolveIn(dir, clean, rel string) (string, *httpError) {
	real, err := filepath.EvalSymlinks(filepath.Join(dir, clean))
	if err != nil {
		return "", nil // missing, or a broken link: not here
	}
	if !within(dir, real) {
		return "", outside(rel)
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return "", nil
	}
	return real, nil
}

// within says whether p lies under dir (both absolute and clean).
func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// loadPair reads the population file at real (rel as the client named it)
// and the weights file it names, which must lie in dir too.
func loadPair(dir, real, rel string) (*neat.Population, string, *httpError) {
	js, err := os.ReadFile(real)
	if err != nil {
		return nil, "", errorf(http.StatusInternalServerError, "%s: %v", rel, errors.Unwrap(err))
	}
	_, weights, err := neat.ParsePopulationJSON(js, rel)
	if err != nil {
		return nil, "", badRequest(err)
	}
	wrel := path.Join(path.Dir(filepath.ToSlash(rel)), filepath.ToSlash(weights))
	wreal, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(real), weights))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", errorf(http.StatusNotFound, "%s: weights %q not found", rel, weights)
	case err != nil:
		return nil, "", errorf(http.StatusNotFound, "%s: weights %q: %v", rel, weights, errors.Unwrap(err))
	case !within(dir, wreal):
		return nil, "", errorf(http.StatusForbidden, "%s: weights %q are outside the allowed folders", rel, weights)
	}
	st, err := os.ReadFile(wreal)
	if err != nil {
		return nil, "", errorf(http.StatusNotFound, "%s: weights %q: %v", rel, weights, errors.Unwrap(err))
	}
	pop, digest, err := neat.Parse(js, st, rel, wrel)
	if err != nil {
		return nil, "", badRequest(err)
	}
	return pop, digest, nil
}
