// Command repoctx collects repository context for fill-in-the-middle code completion.
// Run `repoctx --help` for the subcommands; README.md has examples.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// main runs the CLI under a context that SIGINT or SIGTERM cancels: the command stops
// cleanly (exit 1, its journal kept); a second signal kills the process at once.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the next signal has its default effect
	}()
	os.Exit(MainContext(ctx, os.Args, os.Stdout, os.Stderr))
}
