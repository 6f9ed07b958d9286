package kernels

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

//go:embed resources.sm_90.txt
var resourcesSM90 string

// Resource is what ptxas gave one kernel.
type Resource struct {
	Name      string
	Registers int // per thread
	Shared    int // bytes a block, static, the 1 KiB the system reserves included
	Local     int // bytes a thread (spills and indexed arrays)
	Stack     int // bytes a thread
}

// Resources are the sm_90 cubins' kernels, by name, from
// resources.sm_90.txt.
func Resources() (map[string]Resource, error) {
	r, _, err := parseResources(resourcesSM90)
	return r, err
}

// CubinSources are the SHA-256 sums (hex) of the PTX each sm_90 cubin was
// assembled from, by module name: a cubin whose sum is not its PTX's is
// stale.
func CubinSources() (map[string]string, error) {
	_, s, err := parseResources(resourcesSM90)
	return s, err
}

// parseResources reads lines of "name registers shared local stack" and
// "# ptx module sha256" lines; other lines starting with # are comments.
func parseResources(s string) (map[string]Resource, map[string]string, error) {
	out, sums := map[string]Resource{}, map[string]string{}
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "ptx" {
			sums[f[2]] = f[3]
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, nil, fmt.Errorf("kernels: resources line %d: %d fields, want 5 (name registers shared local stack)", i+1, len(f))
		}
		var v [4]int
		for j := range v {
			n, err := strconv.Atoi(f[j+1])
			if err != nil || n < 0 {
				return nil, nil, fmt.Errorf("kernels: resources line %d: field %d %q is not a count", i+1, j+2, f[j+1])
			}
			v[j] = n
		}
		if _, dup := out[f[0]]; dup {
			return nil, nil, fmt.Errorf("kernels: resources line %d: kernel %s listed twice", i+1, f[0])
		}
		out[f[0]] = Resource{Name: f[0], Registers: v[0], Shared: v[1], Local: v[2], Stack: v[3]}
	}
	return out, sums, nil
}
