package main

import (
	"context"
	"errors"
	"flag"
	"io"
)

// help is a command too; it is added here because it reads the table.
func init() { commands["help"] = cmdHelp }

// cmdHelp prints the overview, or a command's usage and flags: what the
// command itself prints for -h.
func cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stdout, usageText)
		return nil
	}
	if len(args) > 1 {
		return usagef("help: one command at a time")
	}
	if args[0] == "help" {
		io.WriteString(stdout, helpUsage)
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return usagef("help: unknown command %q", args[0])
	}
	if err := cmd(ctx, []string{"-h"}, stdout, stderr); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}
