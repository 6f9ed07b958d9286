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
		printUsage(stdout, newRunFlags(&runOptions{}), runUsage)
	case "plan":
		printUsage(stdout, newPlanFlags(&planOptions{}), planUsage)
	case "gen":
		printUsage(stdout, newGenFlags(&genOptions{}), genUsage)
	case "evolve":
		printUsage(stdout, newEvolveFlags(&evolveOptions{}), evolveUsage)
	case "bench":
		printUsage(stdout, newBenchFlags(&benchOptions{}), benchUsage)
	case "version":
		printUsage(stdout, newVersionFlags(), versionUsage)
	case "help":
		io.WriteString(stdout, helpUsage)
	default:
		return usagef("help: unknown command %q", args[0])
	}
	return nil
}
