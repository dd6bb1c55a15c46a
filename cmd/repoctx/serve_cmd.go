package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/internal/inputfile"
	"github.com/repoctx/repoctx/serve"
	"github.com/repoctx/repoctx/snapshot"
)

var defServe = serve.DefaultConfig()

// serveCmd is `repoctx serve`: live workspaces answering completion points over HTTP.
func serveCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "keep workspace folders indexed as they change and answer completion points over HTTP (JSON)",
		Description: "Indexes each WORKSPACE_DIR once (reusing the cache), watches it and updates the index and the\n" +
			"symbol table on every change (the ignore rules of chunk and index apply); a folder whose files are\n" +
			"those `repoctx index` last indexed starts from the view it stored. API (see docs/serve.md and\n" +
			"docs/openapi.yaml): POST /v1/context {\"path\", \"prefix\", \"suffix\"} or {\"path\", \"text\", \"line\",\n" +
			"\"column\"} (1-based; column in Unicode code points; or \"offset\" in UTF-8 bytes), optional\n" +
			"\"workspace\" and \"options\" (top_k, budget, plan_window, ...); GET /v1/status; GET /healthz;\n" +
			"POST /v1/continue/context (Continue's HTTP context provider). With --upstream URL, a proxy for\n" +
			"editors (docs/editors.md): POST /infill and POST /v1/completions get the repository context and go to\n" +
			"the model server; every other path passes through.\n" +
			"Only loopback Host names and local Origins are answered. SIGINT or SIGTERM stops it gracefully.",
		ArgsUsage: "WORKSPACE_DIR...",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7411", Usage: "listen `address` host:port (loopback by default; port 0 picks a free one, printed on standard output)"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "also answer requests whose Host header is this `name` (only loopback names are answered otherwise: DNS-rebinding protection)"},
			&cli.Int64Flag{Name: "max-body-bytes", Value: defServe.MaxBodyBytes, Usage: "largest request body in `bytes` (larger ones get 413)"},
			&cli.DurationFlag{Name: "read-timeout", Value: defServe.ReadTimeout, Usage: "longest time to read one request, headers and body (a slower client is cut off; at least 100ms); 0 = no limit on the body (headers must still arrive within 10s)"},
			&cli.DurationFlag{Name: "debounce", Value: defServe.Debounce, Usage: "how long a folder must be quiet after a change before the index is updated"},
			&cli.StringFlag{Name: "watch", Value: string(serve.WatchAuto), Usage: "how changes are found: auto (file system events; polling when the system's watch limit is reached) or poll"},
			&cli.DurationFlag{Name: "poll-interval", Value: defServe.PollInterval, Usage: "how often polling stats the files"},
			&cli.BoolFlag{Name: "cross-repo", Usage: "answer a request on one workspace from the other workspaces too (their chunks by BM25 over every workspace's bleve index, kept in the cache; their parts' paths start with the workspace's name; see docs/cross-repo.md)"},
			repoFlag,
		}, indexFlags()...), composeFlags()...), append(append([]cli.Flag{verboseFlag}, walkFlags()...), proxyFlags()...)...),
		Action: runServe,
	}
}

func runServe(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("serve: give one or more workspace folders")
	}
	if c.IsSet("repo") && c.NArg() > 1 {
		return usagef("serve: --repo names one folder's repository: give one folder with it")
	}
	cfg := serve.DefaultConfig()
	var err error
	if cfg.Index, err = indexOptions(c); err != nil {
		return err
	}
	cfg.CacheDir = c.String("cache-dir")
	if cfg.Compose, err = composeOptions(c, assemble.PresetLive); err != nil {
		return err
	}
	if c.String("upstream") == "" || cfg.Compose.Plan.On() { // the proxy counts tokens without the planner
		if err := plannerTokens(c, &cfg.Compose.Plan); err != nil {
			return err
		}
	}
	if cfg.Proxy, err = proxyConfig(c, cfg.Compose.Plan.Tokens); err != nil {
		return err
	}
	cfg.Walk = walkOptions(c)
	if c.Bool("verbose") {
		cfg.Index.Log = c.App.ErrWriter
		cfg.Walk.OnSkip = func(p string, r snapshot.SkipReason) { fmt.Fprintf(c.App.ErrWriter, "skip %s: %s\n", p, r) }
	}
	cfg.Log = c.App.ErrWriter
	cfg.AllowHosts = c.StringSlice("allow-host")
	cfg.MaxBodyBytes, cfg.Debounce, cfg.PollInterval = c.Int64("max-body-bytes"), c.Duration("debounce"), c.Duration("poll-interval")
	cfg.ReadTimeout = c.Duration("read-timeout")
	cfg.CrossRepo = c.Bool("cross-repo")
	switch m := serve.WatchMode(c.String("watch")); m {
	case serve.WatchAuto, serve.WatchPoll:
		cfg.Watch = m
	default:
		return usagef("--watch must be auto or poll, not %q", m)
	}
	if cfg.MaxBodyBytes <= 0 || cfg.PollInterval <= 0 || cfg.Debounce < 0 {
		return usagef("--max-body-bytes and --poll-interval must be positive, --debounce not negative")
	}
	if cfg.ReadTimeout < 0 || cfg.ReadTimeout > 0 && cfg.ReadTimeout < 100*time.Millisecond {
		return usagef("--read-timeout must be 0 (no limit) or at least 100ms, not %v", cfg.ReadTimeout)
	}
	var folders []serve.Folder
	for _, dir := range c.Args().Slice() {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("serve: %s is not a folder", dir)
		}
		repo := c.String("repo")
		if repo == "" {
			repo = index.FolderRepo(dir)
		}
		folders = append(folders, serve.Folder{Dir: dir, Repo: repo})
	}
	// The address first: a busy port fails at once, not after indexing (connections
	// made while the workspaces are indexed wait in the listen queue).
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close()
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := time.Now()
	var srv *serve.Server
	srv, err = serve.New(ctx, folders, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while indexing
		}
		if oe := new(repoctx.OptionError); errors.As(err, &oe) {
			return usagef("%v", oe)
		}
		return err
	}
	defer srv.Close()
	if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(c.App.ErrWriter, "repoctx serve: warning: listening on %s, not a loopback address: other machines can reach the server (requests must still name a loopback or --allow-host Host)\n", ln.Addr())
		}
	}
	fmt.Fprintf(c.App.ErrWriter, "repoctx serve: %d workspace(s) ready in %.2fs, peak RSS %d MB\n", len(folders), time.Since(t).Seconds(), peakRSSMB())
	fmt.Fprintf(c.App.Writer, "listening on http://%s\n", ln.Addr())
	if f, ok := c.App.Writer.(interface{ Sync() error }); ok {
		f.Sync()
	}
	err = srv.Serve(ctx, ln)
	fmt.Fprintf(c.App.ErrWriter, "repoctx serve: stopped (peak RSS %d MB)\n", peakRSSMB())
	return err
}

// Flags of query's cursor mode: the whole completion file on standard input (or
// --text-file) and the cursor in it.
var (
	lineFlag     = &cli.IntFlag{Name: "line", Usage: "cursor `line` (1-based) in the text read from standard input or --text-file (with --column)"}
	columnFlag   = &cli.IntFlag{Name: "column", Usage: "cursor `column` (1-based, in Unicode code points) on --line"}
	offsetFlag   = &cli.IntFlag{Name: "offset", Usage: "cursor as a UTF-8 byte `offset` (0-based) in the text, instead of --line and --column"}
	textFileFlag = &cli.StringFlag{Name: "text-file", Value: "-", Usage: "`file` holding the whole completion file's text for --line/--column or --offset (- for standard input)"}
)

// cursorFlags are query's cursor flags.
func cursorFlags() []cli.Flag { return []cli.Flag{lineFlag, columnFlag, offsetFlag, textFileFlag} }

// maxInputBytes bounds what readInput reads (bytes); a variable for tests.
var maxInputBytes int64 = inputfile.MaxBytes

// readInput reads the input file name whole, "-" being standard input, at most
// maxInputBytes (64 MiB); more, or a FIFO, a device or a folder, is an error naming
// it (exit 1). Errors of standard input say "standard input".
func readInput(c *cli.Context, name string) ([]byte, error) {
	if name == "-" {
		b, err := inputfile.ReadAll(c.App.Reader, "standard input", maxInputBytes)
		if err != nil && !errors.As(err, new(*inputfile.TooLargeError)) {
			err = fmt.Errorf("standard input: %w", err)
		}
		return b, err
	}
	return inputfile.ReadFile(name, maxInputBytes)
}

// queryHole reads query's completion point: --file resolved against repoDir (relative
// to it, or absolute inside it), and the text around the cursor from --prefix-file and
// --suffix-file, or the whole text (standard input or --text-file) with --line and
// --column or --offset, the positions `serve` takes.
func queryHole(c *cli.Context, repoDir string) (repoctx.Hole, error) {
	var h repoctx.Hole
	rel, err := serve.RelPath(repoDir, c.String("file"))
	if err != nil {
		return h, usagef("--file: %v", err)
	}
	h.Path = rel
	cursor := c.IsSet("line") || c.IsSet("column") || c.IsSet("offset")
	if !cursor {
		if c.IsSet("text-file") {
			return h, usagef("--text-file needs a cursor: --line and --column, or --offset")
		}
		var prefix, suffix []byte
		if p := c.String("prefix-file"); p != "" {
			if prefix, err = readInput(c, p); err != nil {
				return h, fmt.Errorf("--prefix-file: %w", err)
			}
		}
		if p := c.String("suffix-file"); p != "" {
			if suffix, err = readInput(c, p); err != nil {
				return h, fmt.Errorf("--suffix-file: %w", err)
			}
		}
		if len(prefix) == 0 && len(suffix) == 0 {
			return h, usagef("query: give --prefix-file or --suffix-file (both empty), or the whole text with --line and --column")
		}
		h.Prefix, h.Suffix = string(prefix), string(suffix)
		return h, nil
	}
	switch {
	case c.IsSet("prefix-file") || c.IsSet("suffix-file"):
		return h, usagef("query: give --prefix-file/--suffix-file or the whole text with a cursor (--line/--column, --offset), not both")
	case c.IsSet("offset") && (c.IsSet("line") || c.IsSet("column")):
		return h, usagef("query: give --line and --column, or --offset, not both")
	case c.IsSet("line") != c.IsSet("column") && !c.IsSet("offset"):
		return h, usagef("query: --line and --column go together")
	}
	raw, err := readInput(c, c.String("text-file"))
	if err != nil {
		return h, err
	}
	text := string(raw)
	var off int
	if c.IsSet("offset") {
		off, err = c.Int("offset"), serve.CheckOffset(text, c.Int("offset"))
	} else {
		off, err = serve.Offset(text, c.Int("line"), c.Int("column"))
	}
	if pe := new(serve.PositionError); errors.As(err, &pe) {
		return h, usagef("--%s: %v", pe.Field, pe)
	}
	h.Prefix, h.Suffix = text[:off], text[off:]
	return h, nil
}
