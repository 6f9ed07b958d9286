package main

import (
	"context"
	"io"
)

// cmdHelp prints the overview, or a command's usage and flags.
func cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stdout, usageText)
		return nil
	}
	if len(args) > 1 {
		return usagef("help: one command at a time")
	}
	switch args[0] {
	case "run":
		fs, _ := newRunFlags(&runOptions{})
		printUsage(stdout, fs, runUsage)
	case "plan":
		fs, _ := newPlanFlags(&planOptions{})
		printUsage(stdout, fs, planUsage)
	case "serve":
		fs, _ := newServeFlags(&serveOptions{})
		printUsage(stdout, fs, serveUsage)
	case "gen":
		printUsage(stdout, newGenFlags(&genOptions{}), genUsage)
	case "evolve":
		fs, _ := newEvolveFlags(&evolveOptions{})
		printUsage(stdout, fs, evolveUsage)
	case "bench":
		printUsage(stdout, newBenchFlags(&benchFlags{}), benchUsage)
	case "export":
		printUsage(stdout, newExportFlags(&exportOptions{}), exportUsage)
	case "plot":
		printUsage(stdout, newPlotFlags(&plotOptions{}), plotUsage)
	case "version":
		printUsage(stdout, newVersionFlags(), versionUsage)
	case "help":
		io.WriteString(stdout, helpUsage)
	default:
		return usagef("help: unknown command %q", args[0])
	}
	return nil
}
