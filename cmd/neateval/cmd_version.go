package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/neateval/neateval/run"
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
	fmt.Fprintf(&b, "neateval %s\n", run.Version())
	fmt.Fprintf(&b, "go        %s\n", runtime.Version())
	fmt.Fprintf(&b, "platform  %s/%s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(&b, "cpu       %s\n", run.CPUFeatures())
	return b.String()
}
