package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/chunker"
)

// chunkCmd prints the chunks of source files.
func chunkCmd() *cli.Command {
	return &cli.Command{
		Name:      "chunk",
		Usage:     "print the chunks of source files",
		ArgsUsage: "PATH...",
		Flags:     []cli.Flag{strategyFlag, maxCharsFlag, windowFlag, overlapFlag, &cli.BoolFlag{Name: "json", Usage: "print one JSON object per chunk"}},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("chunk: give one or more files")
			}
			strategy, err := chunker.ParseStrategy(c.String("strategy"))
			if err != nil {
				return usagef("--strategy must be structural or fixed, not %q", c.String("strategy"))
			}
			ch, err := chunker.New(strategy, chunkerOptions(c))
			if err != nil {
				return err
			}
			defer ch.Close()
			enc := json.NewEncoder(c.App.Writer)
			enc.SetEscapeHTML(false)
			failed := 0
			for _, p := range c.Args().Slice() {
				raw, err := os.ReadFile(p)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "repoctx: %v\n", err)
					failed++
					continue
				}
				f, err := chunker.Decode(filepath.ToSlash(p), raw, 0)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "repoctx: skip %v\n", err)
					failed++
					continue
				}
				cs, err := ch.Chunk(f)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "repoctx: %s: %v\n", p, err)
					failed++
					continue
				}
				for _, k := range cs {
					if c.Bool("json") {
						if err := enc.Encode(k); err != nil {
							return err
						}
						continue
					}
					flags := ""
					if k.Fallback {
						flags += " fallback"
					}
					if k.ParseError {
						flags += " parse-error"
					}
					fmt.Fprintf(c.App.Writer, "%s:%d-%d %s%s%s\n", k.Path, k.StartLine, k.EndLine, k.Kind, prefixSpace(k.Name), flags)
					if len(k.Header) > 0 {
						fmt.Fprintf(c.App.Writer, "  in: %s\n", strings.Join(k.Header, " > "))
					}
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d files could not be chunked", failed, c.NArg())
			}
			return nil
		},
	}
}
