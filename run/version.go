package run

import (
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/cpu"
)

// modulePath is neateval's module, found in the build info of a binary
// that embeds it.
const modulePath = "github.com/neateval/neateval"

// Version is neateval's module version in this binary ("(devel)" for a
// build from a checkout), with the VCS revision and a "+dirty" mark when
// the build recorded them. In a program that embeds neateval it is the
// version of the neateval module that program requires.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path != modulePath {
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				return d.Version
			}
		}
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + dirty
	}
	return v
}

// CPUFeatures lists the SIMD features of this CPU that matter to the CPU
// backend's kernels.
func CPUFeatures() string {
	var fs []string
	add := func(ok bool, name string) {
		if ok {
			fs = append(fs, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "386":
		add(cpu.X86.HasSSE41, "sse4.1")
		add(cpu.X86.HasAVX, "avx")
		add(cpu.X86.HasAVX2, "avx2")
		add(cpu.X86.HasFMA, "fma")
		add(cpu.X86.HasAVX512F, "avx512f")
		add(cpu.X86.HasAVX512BF16, "avx512bf16")
		add(cpu.X86.HasAMXBF16, "amx-bf16")
	case "arm64":
		add(cpu.ARM64.HasASIMD, "asimd")
		add(cpu.ARM64.HasFPHP, "fp16")
		add(cpu.ARM64.HasASIMDDP, "asimddp")
		add(cpu.ARM64.HasSVE, "sve")
		add(cpu.ARM64.HasSVE2, "sve2")
	}
	if len(fs) == 0 {
		return "(no SIMD features detected)"
	}
	return strings.Join(fs, " ")
}
