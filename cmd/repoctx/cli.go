package main

// Design note: command-line conventions (as gh and go have them).
//
// prepare walks the command tree once: a flag marked Required is checked by the
// command's Before hook instead of urfave/cli (which prints the whole help before a
// one-line error), so a missing flag is one line naming the command; a flag parse
// error names the command too. interspersed lets flags follow positional arguments
// for every command and subcommand (urfave/cli v2 stops at the first argument).
// describe turns an error into the message Main prints, in the user's words: a
// library's package prefix ("dataset: ", "retrieve: ") is dropped, a fault of the
// environment says what could not be written and how to continue; exitCode picks
// the exit status (docs/cli.md, "Exit codes").

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/dataset"
)

func init() {
	// --version without a short form: -v is --verbose in the commands.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version (module version and VCS revision) and exit"}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, version()) }
}

// prepare sets the app's version and, for every command, the required-flag check
// and the usage-error handler; it returns app.
func prepare(app *cli.App) *cli.App {
	app.Version = version()
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			full := path + " " + c.Name
			var required []string
			for _, f := range c.Flags {
				if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
					sf.Required = false
					required = append(required, sf.Name)
				}
			}
			if len(required) > 0 {
				before := c.Before
				c.Before = func(ctx *cli.Context) error {
					if err := requireFlags(ctx, full, required); err != nil {
						return err
					}
					if before != nil {
						return before(ctx)
					}
					return nil
				}
			}
			c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
				return usageError{msg: fmt.Sprintf("%s: %v; see %s --help", full, err, full), whole: true}
			}
			walk(full, c.Subcommands)
		}
	}
	walk(app.Name, app.Commands)
	return app
}

// requireFlags returns a usage error naming the flags of names that ctx lacks.
func requireFlags(ctx *cli.Context, command string, names []string) error {
	var missing []string
	for _, n := range names {
		if !ctx.IsSet(n) {
			missing = append(missing, "--"+n)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usageError{msg: fmt.Sprintf("%s: %s is required; see %s --help", command, missing[0], command), whole: true}
	}
	return usageError{msg: fmt.Sprintf("%s: %s and %s are required; see %s --help", command,
		strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1], command), whole: true}
}

// version returns "repoctx {module version}, revision {vcs.revision} [(modified)] {vcs.time}, {go version} {os}/{arch}"
// from the build information; a binary built without VCS stamping (-buildvcs=false)
// says "revision unknown".
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersion(bi)
}

// formatVersion is version for the build information bi (nil: none).
func formatVersion(bi *debug.BuildInfo) string {
	mod, rev, when, dirty := "(devel)", "", "", false
	if bi != nil {
		if bi.Main.Version != "" {
			mod = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	r := "revision unknown (built without VCS stamping)"
	if rev != "" {
		r = "revision " + rev
		if dirty {
			r += " (modified)"
		}
		if when != "" {
			r += " " + when
		}
	}
	return fmt.Sprintf("repoctx %s, %s, %s %s/%s", mod, r, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func versionCmd() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version (module version and VCS revision)",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("version: takes no arguments")
			}
			_, err := fmt.Fprintln(c.App.Writer, version())
			return err
		},
	}
}

// interspersed moves a command's positional arguments after its flags, so that
// `repoctx query REPO --file F` and `repoctx dataset from-git REPO --lang kotlin` work:
// urfave/cli v2 stops parsing flags at the first positional argument. Global flags
// before the command stay where they are; arguments after "--" are left alone (and
// "--" is kept, so urfave/cli takes them as positional).
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// Global flags, then the command path down to the leaf command.
	appFlags := valueFlags(app.Flags)
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "--" && rest[0] != "-" {
		out = append(out, rest[0])
		name := strings.TrimLeft(rest[0], "-")
		rest = rest[1:]
		if !strings.Contains(name, "=") && appFlags[name] && len(rest) > 0 {
			out, rest = append(out, rest[0]), rest[1:]
		}
	}
	cmds := app.Commands
	var cmd *cli.Command
	for len(rest) > 0 {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(rest[0]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		out, rest = append(out, rest[0]), rest[1:]
		if len(next.Subcommands) == 0 {
			break
		}
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return append(out, rest...)
	}
	takesValue := valueFlags(cmd.Flags)
	var flags, pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	out = append(out, flags...)
	return append(out, pos...)
}

// valueFlags returns, by every name of flags, whether the flag takes a value (all but
// bool flags).
func valueFlags(flags []cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			m[n] = !isBool
		}
	}
	return m
}

// exitCode maps an error to the exit status: 0 none, 3 some datapoints failed (the
// output was written), 2 a usage error (bad flags, arguments or option values), 1
// anything else (a failed command, a fault of the environment).
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, repoctx.ErrSomeFailed):
		return exitSomeFailed
	case isUsage(err):
		return exitUsage
	}
	return exitError
}

// isUsage reports whether err is a usage error: ours, an invalid option value, or
// one of urfave/cli's flag errors.
func isUsage(err error) bool {
	if errors.As(err, new(usageError)) || errors.As(err, new(*repoctx.OptionError)) {
		return true
	}
	s := err.Error()
	return strings.HasPrefix(s, "Required flag") || strings.Contains(s, "flag provided but not defined") || strings.HasPrefix(s, "invalid value")
}

// libraryPrefixes are the package prefixes library errors start with.
var libraryPrefixes = []string{"repoctx", "dataset", "fromgit", "retrieve", "hugot", "eval", "assemble", "index", "snapshot", "store", "batch", "chunker", "symbols", "grammars", "tokens"}

// describe returns the line Main prints for err: "repoctx: " and the message in the
// user's words (see the design note).
func describe(err error) string {
	var ue usageError
	if errors.As(err, &ue) && ue.whole {
		return ue.msg
	}
	msg := stripPrefixes(err.Error())
	if repoctx.IsEnvironment(err) {
		msg = environmentMessage(err)
	}
	var se *dataset.StoppedError
	if errors.As(err, &se) && se.Journal != "" && !errors.Is(err, context.Canceled) {
		if !repoctx.IsEnvironment(err) {
			msg = stripPrefixes(se.Err.Error())
		}
		msg += fmt.Sprintf("; stopped: the journal %s keeps %d of %d datapoints: fix the cause and rerun the same command with --resume", se.Journal, se.Done, se.Total)
	} else if errors.As(err, &se) && se.Journal != "" {
		msg = fmt.Sprintf("interrupted; the journal %s keeps %d of %d datapoints: rerun the same command with --resume", se.Journal, se.Done, se.Total)
	} else if errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	return "repoctx: " + msg
}

// stripPrefixes drops the package prefixes ("dataset: ", "retrieve: ") a message
// starts with.
func stripPrefixes(s string) string {
	for {
		trimmed := false
		for _, p := range libraryPrefixes {
			if rest, ok := strings.CutPrefix(s, p+": "); ok {
				s, trimmed = rest, true
			}
		}
		if !trimmed {
			return s
		}
	}
}

// environmentMessage says what a fault of the environment kept the command from
// doing and why, in one line: "cannot write the index cache in DIR: no space left on
// device".
func environmentMessage(err error) string {
	why := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why = errno.Error()
	}
	var ee *repoctx.EnvironmentError
	if errors.As(err, &ee) && ee.Op != "" {
		return ee.Op + ": " + why
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("cannot %s %s: %s", pe.Op, pe.Path, why)
	}
	return stripPrefixes(err.Error())
}
