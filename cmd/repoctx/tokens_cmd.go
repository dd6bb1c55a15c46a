package main

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/tokens"
)

// tokensCmd prints the exact token count of files under a Hugging Face
// tokenizer.json; see package tokens.
func tokensCmd() *cli.Command {
	return &cli.Command{
		Name:  "tokens",
		Usage: "count the tokens of files (or standard input) with a Hugging Face tokenizer.json",
		Description: "Prints tokens<TAB>characters<TAB>path per file: tokens as the tokenizer counts them without\n" +
			"special tokens around the text (added tokens such as <|file_sep|> count one each), characters\n" +
			"in Unicode code points. With no FILE it reads standard input (path -). Byte-level BPE (Qwen,\n" +
			"GPT-2, StarCoder, Llama 3) and WordPiece (BERT) files are supported; any other is an error.",
		ArgsUsage: "[FILE...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tokenizer", Required: true, Usage: "Hugging Face tokenizer.json `file`"},
		},
		Action: func(c *cli.Context) error {
			tk, err := tokens.Load(c.String("tokenizer"))
			if err != nil {
				return usagef("--tokenizer: %v", err)
			}
			paths := c.Args().Slice()
			if len(paths) == 0 {
				paths = []string{"-"}
			}
			var errs []error
			for _, p := range paths {
				b, err := readInput(c, p)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				s := string(b)
				if _, err := fmt.Fprintf(c.App.Writer, "%d\t%d\t%s\n", tk.CountInt(s), utf8.RuneCountInString(s), p); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				// Each error names its file (readInput's do).
				return fmt.Errorf("tokens: %w", errors.Join(errs...))
			}
			return nil
		},
	}
}
