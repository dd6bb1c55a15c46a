package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/dataset/fromgit"
	"github.com/repoctx/repoctx/grammars"
)

// datasetCmd groups the commands that build datasets.
func datasetCmd() *cli.Command {
	return &cli.Command{
		Name:        "dataset",
		Usage:       "build benchmark datasets in the competition layout",
		Subcommands: []*cli.Command{fromGitCmd()},
	}
}

// fromGitCmd builds a benchmark from the history of local git repositories.
func fromGitCmd() *cli.Command {
	return &cli.Command{
		Name:  "from-git",
		Usage: "build {lang}-{stage}.jsonl, .truth.jsonl and snapshots from real commits of git repositories",
		Description: "Each datapoint is a commit that adds real code to a file of the language: the snapshot is\n" +
			"the parent revision, prefix + middle + suffix the file after the commit, as in the competition's\n" +
			"own data. --style small (the default): a hunk that adds 1-3 lines of real code, the middle.\n" +
			"--style block: a hunk that adds at least 6 non-blank lines; the middle is 1-3 code lines (the\n" +
			"first real code; a closing bracket may end them) inside it with at least 2 of its non-blank\n" +
			"lines before it, so the prefix ends in code the snapshot has never seen (like\n" +
			"../shared/data/devb and the competition's example).\n" +
			"A repository may be a work tree, its .git folder or a bare mirror.",
		ArgsUsage: "REPO...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lang", Required: true, Usage: "`language` of the completion files: a registered grammar name (kotlin, python, java, ...)"},
			&cli.StringFlag{Name: "stage", Required: true, Usage: "stage `name` used in the output file names, e.g. git"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "output `directory`"},
			&cli.IntFlag{Name: "per-repo", Value: fromgit.DefaultPerRepo, Usage: "most datapoints per repository"},
			&cli.IntFlag{Name: "max-commits", Value: fromgit.DefaultMaxCommits, Usage: "non-merge commits listed per repository, newest first"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "random seed for the commit order and hunk choice"},
			&cli.StringFlag{Name: "style", Value: fromgit.StyleSmall, Usage: "datapoint `style`: small (a hunk of 1-3 new lines is the middle) or block (1-3 lines inside a hunk of >= 6 new lines, >= 2 before them)"},
			&cli.StringFlag{Name: "layout", Value: fromgit.LayoutZip, Usage: "snapshot `layout`: zip ({lang}-{stage}.zip) or folders (repositories-{lang}-{stage}/)"},
			&cli.StringFlag{Name: "name", Usage: "`owner/repo` of the repository (one REPO only; default from its path)"},
			&cli.IntFlag{Name: "max-commit-files", Value: fromgit.DefaultMaxCommitFiles, Usage: "skip commits touching more files"},
			&cli.Int64Flag{Name: "max-file-bytes", Value: fromgit.DefaultMaxFileBytes, Usage: "skip completion files larger than this (bytes)"},
			&cli.StringFlag{Name: "since", Usage: "leave out the history of this `revision`"},
			&cli.StringFlag{Name: "until", Value: "HEAD", Usage: "walk back from this `revision`"},
			verboseFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("dataset from-git: give one or more repositories")
			}
			lang := c.String("lang")
			if grammars.Lookup(lang) == nil {
				return usagef("--lang must be one of %s, not %q", strings.Join(grammars.Names(), ", "), lang)
			}
			layout := c.String("layout")
			if layout != fromgit.LayoutZip && layout != fromgit.LayoutFolders {
				return usagef("--layout must be zip or folders, not %q", layout)
			}
			style := c.String("style")
			if style != fromgit.StyleSmall && style != fromgit.StyleBlock {
				return usagef("--style must be small or block, not %q", style)
			}
			if c.String("name") != "" && c.NArg() > 1 {
				return usagef("--name names one repository, but %d are given", c.NArg())
			}
			for _, f := range []string{"per-repo", "max-commits", "max-commit-files"} {
				if c.Int(f) <= 0 {
					return usagef("--%s must be positive", f)
				}
			}
			if c.Int64("max-file-bytes") <= 0 {
				return usagef("--max-file-bytes must be positive")
			}
			opts := fromgit.Options{
				Repos: c.Args().Slice(), Name: c.String("name"), Lang: lang, Stage: c.String("stage"),
				OutDir: c.String("out"), PerRepo: c.Int("per-repo"), MaxCommits: c.Int("max-commits"),
				Seed: c.Int64("seed"), Layout: layout, Style: style, MaxCommitFiles: c.Int("max-commit-files"),
				MaxFileBytes: c.Int64("max-file-bytes"), Since: c.String("since"), Until: c.String("until"),
			}
			if c.Bool("verbose") {
				opts.Log = c.App.ErrWriter
			}
			sum, err := fromgit.Run(opts)
			if err != nil {
				return err
			}
			w := c.App.Writer
			for _, r := range sum.Repos {
				fmt.Fprintf(w, "%s (%s): %d datapoints, %d snapshots; %d of %d listed commits scanned\n",
					r.Repo, r.Path, r.Datapoints, r.Snapshots, r.Scanned, r.Commits)
				if s := countList(r.SkippedCommits); s != "" {
					fmt.Fprintf(w, "  commits skipped: %s\n", s)
				}
				if s := countList(r.SkippedFiles); s != "" {
					fmt.Fprintf(w, "  files skipped: %s\n", s)
				}
			}
			fmt.Fprintf(w, "wrote %s: %d datapoints, %d snapshots (%d written, %d kept), %d bytes, %.2fs\n",
				strings.Join(sum.Files, ", "), sum.Datapoints, sum.Snapshots, sum.Written, sum.Reused, sum.Bytes, sum.Elapsed.Seconds())
			if sum.Datapoints == 0 {
				return fmt.Errorf("dataset from-git: no datapoint found (try more --max-commits, or another --lang)")
			}
			return nil
		},
	}
}

// countList formats counts by reason as "reason N, reason N", sorted by reason.
func countList(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
