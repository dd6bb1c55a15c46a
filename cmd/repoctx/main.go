// Command repoctx collects repository context for fill-in-the-middle code completion.
// Run `repoctx --help` for the subcommands; README.md has examples.
package main

import "os"

func main() { os.Exit(Main(os.Args, os.Stdout, os.Stderr)) }
