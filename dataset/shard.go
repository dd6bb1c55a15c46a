package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/internal/inputfile"
)

// Shard is one part of a dataset split by repository, for running a prediction on
// several machines: shard I of N (1-based) holds the datapoints whose repository
// hashes to I (FNV-1a 64 of "owner/name", modulo N), so a repository never spans two
// shards and its index is built once. The zero value is the whole dataset.
type Shard struct {
	I, N int
}

// ParseShard reads "I/N" (1 <= I <= N).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("dataset: shard %q: want I/N with 1 <= I <= N, e.g. 2/3", s)
	}
	return Shard{I: i, N: n}, nil
}

// On reports whether the shard selects a part (N > 1).
func (s Shard) On() bool { return s.N > 1 }

// String returns "I/N", or "all".
func (s Shard) String() string {
	if !s.On() {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Holds reports whether the shard holds the datapoints of repository repo (a bad line
// without a repository counts as repo "").
func (s Shard) Holds(repo string) bool {
	if !s.On() {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(repo))
	return int(h.Sum64()%uint64(s.N)) == s.I-1
}

// filter returns the datapoints of seq the shard holds.
func (s Shard) filter(seq iter.Seq2[Datapoint, error]) iter.Seq2[Datapoint, error] {
	return func(yield func(Datapoint, error) bool) {
		for d, err := range seq {
			if (err == nil || d.Line > 0) && !s.Holds(d.Repo) {
				continue
			}
			if !yield(d, err) {
				return
			}
		}
	}
}

// count returns the number of datapoints of path the shard holds.
func (s Shard) count(path string) (int, error) {
	if !s.On() {
		return CountDatapoints(path)
	}
	n := 0
	for d, err := range DatapointsFile(path) {
		if err != nil && d.Line == 0 {
			return n, err
		}
		if s.Holds(d.Repo) {
			n++
		}
	}
	return n, nil
}

// shardLinePrefix starts every line of a shard's output: the datapoint's 1-based line
// in the datapoint file, then the prediction line's own keys.
const shardLinePrefix = `{"datapoint":`

// shardDataKey follows the datapoint key: the digest of the datapoint file the shard
// was made from (fileDigest), which merge checks.
const shardDataKey = `"data":"`

// shardLine returns the prediction line of the datapoint on line n of the datapoint
// file of digest data, as a shard writes it: {"datapoint":n,"data":"<digest>", and
// the prediction line's keys.
func shardLine(n int, data string, line []byte) []byte {
	return append([]byte(shardLinePrefix+strconv.Itoa(n)+","+shardDataKey+data+`",`), line[1:]...)
}

// Merge puts the outputs of the shards of a prediction back together: it reads the
// datapoint file DataDir/{lang}-{stage}.jsonl and the shard files, and writes out (or
// standard output for "-"), atomically, one prediction line per datapoint in input
// order, byte-identical to what an unsharded run writes. It returns an error naming
// the file and line when a shard file is malformed, when a datapoint has no line in
// any shard file (naming the first such datapoints) or a line in two.
func Merge(dataDir, lang, stage, out string, shardFiles []string) (int, error) {
	dpFile := filepath.Join(dataDir, lang+"-"+stage+".jsonl")
	var lines []int // the datapoints' lines, in order
	for d, err := range DatapointsFile(dpFile) {
		if err != nil && d.Line == 0 {
			return 0, err
		}
		lines = append(lines, d.Line)
	}
	digest, err := fileDigest(dpFile)
	if err != nil {
		return 0, err
	}
	byLine := make(map[int][]byte, len(lines))
	from := map[int]string{}
	for _, f := range shardFiles {
		if err := readShardFile(f, digest, dpFile, byLine, from); err != nil {
			return 0, err
		}
	}
	var missing []string
	for _, l := range lines {
		if byLine[l] == nil {
			missing = append(missing, strconv.Itoa(l))
		}
	}
	if n := len(missing); n > 0 {
		more := ""
		if n > 10 {
			more, missing = fmt.Sprintf(" and %d more", n-10), missing[:10]
		}
		return 0, fmt.Errorf("dataset: merge: %d of %d datapoints have no line in the shard files: %s lines %s%s", n, len(lines), dpFile, strings.Join(missing, ", "), more)
	}
	if len(byLine) != len(lines) {
		return 0, fmt.Errorf("dataset: merge: the shard files hold lines for %d datapoints, %s has %d", len(byLine), dpFile, len(lines))
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		for _, l := range lines {
			bw.Write(byLine[l])
			bw.WriteByte('\n')
		}
		return bw.Flush()
	}
	if out == "-" {
		return len(lines), write(os.Stdout)
	}
	if err := atomicfile.Write(out, write, atomicfile.Options{Sync: true}); err != nil {
		return 0, fmt.Errorf("dataset: merge: write %s: %w", out, err)
	}
	return len(lines), nil
}

// readShardFile adds the lines of one shard file to byLine (datapoint line -> the
// prediction line without the shard key), refusing duplicates.
func readShardFile(path, digest, dpFile string, byLine map[int][]byte, from map[int]string) error {
	f, err := inputfile.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: merge: %w", err)
	}
	defer f.Close()
	lr := newLineReader(f)
	for {
		raw, tooLong, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataset: merge: read %s: %w", path, err)
		}
		raw = bytes.TrimRight(raw, "\r")
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("dataset: merge: %s:%d: %s (not the output of predict --shard)", path, lr.line, why)
		}
		if tooLong || !bytes.HasPrefix(raw, []byte(shardLinePrefix)) {
			return bad("no datapoint key at the start")
		}
		rest := raw[len(shardLinePrefix):]
		comma := bytes.IndexByte(rest, ',')
		n, err := strconv.Atoi(string(rest[:max(comma, 0)]))
		if comma < 0 || err != nil || n < 1 {
			return bad("bad datapoint key")
		}
		rest = rest[comma+1:]
		if d, ok := bytes.CutPrefix(rest, []byte(shardDataKey)); ok { // absent in shards of older versions
			end := bytes.Index(d, []byte(`",`))
			if end < 0 {
				return bad("bad data key")
			}
			if string(d[:end]) != digest {
				return fmt.Errorf("dataset: merge: %s:%d was written for another datapoint file than %s (digest %s, not %s)", path, lr.line, dpFile, d[:end], digest)
			}
			rest = d[end+2:]
		}
		line := append([]byte("{"), rest...)
		if err := checkLine(line); err != nil {
			return bad(err.Error())
		}
		if prev, dup := from[n]; dup {
			return fmt.Errorf("dataset: merge: datapoint on line %d has a line in %s and in %s:%d", n, prev, path, lr.line)
		}
		from[n] = fmt.Sprintf("%s:%d", path, lr.line)
		byLine[n] = line
	}
}
