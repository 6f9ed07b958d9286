package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/cpu"
)

func newVersionFlags() *flag.FlagSet {
	return flag.NewFlagSet("version", flag.ContinueOnError)
}

// cmdVersion prints what `neateval version` says.
func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := parseFlags(newVersionFlags(), args, stdout, versionUsage); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, versionText())
	return err
}

// versionText is the version report: neateval's version, Go, platform and
// CPU.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "neateval %s\n", buildVersion())
	fmt.Fprintf(&b, "go        %s\n", runtime.Version())
	fmt.Fprintf(&b, "platform  %s/%s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(&b, "cpu       %s\n", cpuFeatures())
	return b.String()
}

// buildVersion is the module version of the binary ("(devel)" for a build
// from a checkout), with the VCS revision and a "+dirty" mark when the
// build recorded them.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
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

// cpuFeatures lists the SIMD features that matter to the CPU kernels.
func cpuFeatures() string {
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
