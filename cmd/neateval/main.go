package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal the run winds down, keeping its results; a
		// second signal gets the default behaviour and kills the process.
		<-ctx.Done()
		stop()
	}()
	err := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(report(err, os.Stderr))
}

// commands maps each command to its entry point; each parses its own flags
// (cmd_<verb>.go).
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"run":     cmdRun,
	"gen":     cmdGen,
	"evolve":  cmdEvolve,
	"export":  cmdExport,
	"bench":   cmdBench,
	"plan":    cmdPlan,
	"plot":    cmdPlot,
	"serve":   cmdServe,
	"version": cmdVersion,
	"worker":  cmdWorker,
	"broker":  cmdBroker,
}

// runMain runs the command named by args[0].
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stderr, usageText)
		return usagef("no command given")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commands[name]
	if !ok {
		return usagef("unknown command %q (commands: %s; see neateval help)", args[0], strings.Join(commandNames, ", "))
	}
	return cmd(ctx, args[1:], stdout, stderr)
}

var commandNames = []string{"run", "plan", "serve", "gen", "evolve", "export", "bench", "plot", "worker", "broker", "version", "help"}

// report prints err as one line, "neateval: <message>", and returns the
// exit code for it.
func report(err error, stderr io.Writer) int {
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "neateval: %s\n", message(err))
	}
	return exitCode(err)
}

// message is err's message on one line, with what the user can do about
// it when the message alone does not say.
func message(err error) string {
	msg := oneLine(err.Error())
	if a := advice(err); a != "" {
		msg += "; " + a
	}
	return msg
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// parseFlags parses a command's flags. Errors become usage errors naming
// the command; -h and --help print the command's usage to stdout and
// return flag.ErrHelp (exit 0). Arguments left over are refused.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, usage string) error {
	fs.SetOutput(io.Discard) // errors are reported by report, as one line
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout, fs, usage)
			return err
		}
		return usagef("%s: %v (see neateval help %s)", fs.Name(), err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q (see neateval help %s)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

// printUsage writes a command's usage text and its flags.
func printUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	io.WriteString(w, usage)
	io.WriteString(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	io.WriteString(w, exitCodesText)
}
