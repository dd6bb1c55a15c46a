package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gomlx/go-huggingface/hub"
	khugot "github.com/knights-analytics/hugot"
	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/retrieve/hugot"
	"github.com/repoctx/repoctx/store"
)

// defaultOnnxFile is the ONNX file of hugot.DefaultModel: its Hugging Face repository
// holds several (optimised, quantised) in onnx/.
const defaultOnnxFile = "onnx/model.onnx"

// modelCmd is `repoctx model`: fetch and inspect the Hugging Face sentence encoders
// that --model selects for dense retrieval.
func modelCmd() *cli.Command {
	return &cli.Command{
		Name:  "model",
		Usage: "download or inspect a dense retrieval model (the default needs none: it fits LSA on the repository)",
		Subcommands: []*cli.Command{
			{
				Name:      "download",
				Usage:     "download a Hugging Face sentence encoder (ONNX) for --model; needs internet access",
				ArgsUsage: "[NAME]",
				Description: fmt.Sprintf("Downloads NAME (default %s, the seed's model) with hugot's downloader into\n"+
					"DIR/{owner}_{name} and prints that folder. It holds the .onnx file, tokenizer.json,\n"+
					"config.json and, when the repository has one, sentence_bert_config.json (its\n"+
					"max_seq_length is the token limit: 256 for all-MiniLM-L6-v2).", hugot.DefaultModel),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "dir", Value: defaultModelsDir(), Usage: "`directory` to download into"},
					&cli.StringFlag{Name: "onnx", Usage: "`path` of the ONNX file in the repository when it has several (default " + defaultOnnxFile + " for the default model)"},
					&cli.StringFlag{Name: "token", EnvVars: []string{"HF_TOKEN"}, Usage: "Hugging Face access `token` for private or gated models"},
					&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "show download progress"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() > 1 {
						return usagef("model download: give at most one model name")
					}
					name := hugot.DefaultModel
					if c.NArg() == 1 {
						name = c.Args().First()
					}
					opts := khugot.NewDownloadOptions()
					opts.OnnxFilePath = c.String("onnx")
					if opts.OnnxFilePath == "" && name == hugot.DefaultModel {
						opts.OnnxFilePath = defaultOnnxFile
					}
					opts.AuthToken = c.String("token")
					opts.Verbose = c.Bool("verbose")
					if err := os.MkdirAll(c.String("dir"), 0o755); err != nil {
						return err
					}
					path, err := khugot.DownloadModel(name, c.String("dir"), opts)
					if err != nil {
						return fmt.Errorf("download %s: %w", name, err)
					}
					if err := fetchSentenceConfig(name, path, opts.AuthToken); err != nil {
						fmt.Fprintf(c.App.ErrWriter, "repoctx: %s: no sentence_bert_config.json (%v); the token limit comes from config.json\n", name, err)
					}
					return printModel(c.App.Writer, path, false)
				},
			},
			{
				Name:      "info",
				Usage:     "load a model folder and print its ID, dimension and token limit",
				ArgsUsage: "DIR",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "backend", Value: "go", Usage: "`backend`: go (pure Go) or ort (ONNX Runtime; needs a binary built with -tags onnxruntime)"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("model info: give one model folder")
					}
					dir := c.Args().First()
					if _, err := hugot.ModelID(dir, hugot.Options{}); err != nil {
						return err
					}
					t := time.Now()
					emb, err := hugot.New(dir, hugot.Options{Backend: c.String("backend")})
					if err != nil {
						return err
					}
					defer emb.Close()
					fmt.Fprintf(c.App.Writer, "model %s\n  folder %s\n  dimension %d\n  loaded in %.2fs (backend %s)\n",
						emb.ID(), dir, emb.Dim(), time.Since(t).Seconds(), c.String("backend"))
					return nil
				},
			},
		},
	}
}

// defaultModelsDir is where `model download` puts models: a "models" folder in the
// default cache directory.
func defaultModelsDir() string { return filepath.Join(store.DefaultCacheDir(), "models") }

// fetchSentenceConfig copies the repository's sentence_bert_config.json (which hugot's
// downloader skips) into the model folder, if the repository has one.
func fetchSentenceConfig(name, dir, token string) error {
	const file = "sentence_bert_config.json"
	repo := hub.New(name)
	if token != "" {
		repo = repo.WithAuth(token)
	}
	repo.WithProgressBar(false)
	if err := repo.DownloadInfo(false); err != nil {
		return err
	}
	if !repo.HasFile(file) {
		return fmt.Errorf("the repository has none")
	}
	src, err := repo.DownloadFile(file)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), b, 0o644)
}

// printModel prints a downloaded model folder and how to use it.
func printModel(w io.Writer, dir string, _ bool) error {
	id, err := hugot.ModelID(dir, hugot.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n  model %s\n  use it with --model %s\n", dir, id, dir)
	return nil
}
