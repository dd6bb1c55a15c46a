package preprocess

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/repoctx/repoctx/chunker"
)

// Writer receives the chunks of each file, one call per file in output order, and
// writes them in one output format.
type Writer interface {
	// Write writes the chunks cs of one file whose raw bytes have the lower-case hex
	// SHA-256 sha. An error stops Run.
	Write(cs []chunker.Chunk, sha string) error
	// Close finishes the format (a Parquet footer). It neither flushes nor closes the
	// underlying io.Writer, which is the caller's.
	Close() error
}

// NewTextWriter returns a Writer of the human-readable listing: one line per chunk,
// "path:start-end kind name [fallback] [parse-error] [limit=L]", and
// "  in: header > ..." when it has one.
func NewTextWriter(w io.Writer) Writer { return textWriter{w} }

type textWriter struct{ w io.Writer }

func (t textWriter) Write(cs []chunker.Chunk, _ string) error {
	for _, k := range cs {
		flags := ""
		if k.Fallback {
			flags += " fallback"
		}
		if k.ParseError {
			flags += " parse-error"
		}
		if k.Limit != chunker.LimitNone {
			flags += " limit=" + string(k.Limit)
		}
		name := ""
		if names := k.DefNames(); len(names) > 0 {
			name = " " + strings.Join(names, ", ")
		}
		if _, err := fmt.Fprintf(t.w, "%s:%d-%d %s%s%s\n", k.Path, k.StartLine, k.EndLine, k.Kind, name, flags); err != nil {
			return err
		}
		if len(k.Header) > 0 {
			if _, err := fmt.Fprintf(t.w, "  in: %s\n", strings.Join(k.Header, " > ")); err != nil {
				return err
			}
		}
	}
	return nil
}

func (textWriter) Close() error { return nil }

// NewJSONLWriter returns a Writer of JSON Lines: one Row per line, HTML characters
// not escaped.
func NewJSONLWriter(w io.Writer) Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return jsonlWriter{enc}
}

type jsonlWriter struct{ enc *json.Encoder }

func (j jsonlWriter) Write(cs []chunker.Chunk, sha string) error {
	for _, k := range cs {
		if err := j.enc.Encode(NewRow(k, sha)); err != nil {
			return err
		}
	}
	return nil
}

func (jsonlWriter) Close() error { return nil }

// ParquetRowsPerGroup bounds a Parquet row group, which the writer holds in memory
// until it is full: 20,000 chunks of the default size are some 20-40 MB of text.
const ParquetRowsPerGroup = 20000

// parquetSchemaName is the name of the Parquet schema's root, kept from the files
// written before this package existed so that their bytes do not change.
const parquetSchemaName = "chunkRow"

// NewParquetWriter returns a Writer of a Parquet file of Rows (zstd-compressed,
// at most ParquetRowsPerGroup rows per row group, created by "repoctx", schema
// root "chunkRow"). Close writes the footer; the output holds nothing but the rows
// and those settings, so equal inputs and options give equal bytes.
func NewParquetWriter(w io.Writer) Writer {
	schema := parquet.NewSchema(parquetSchemaName, parquet.SchemaOf(Row{}))
	return &parquetWriter{w: parquet.NewGenericWriter[Row](w, schema, parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(ParquetRowsPerGroup), parquet.CreatedBy("repoctx", "", ""))}
}

type parquetWriter struct {
	w    *parquet.GenericWriter[Row]
	rows []Row
}

func (p *parquetWriter) Write(cs []chunker.Chunk, sha string) error {
	p.rows = p.rows[:0]
	for _, k := range cs {
		p.rows = append(p.rows, NewRow(k, sha))
	}
	_, err := p.w.Write(p.rows)
	return err
}

func (p *parquetWriter) Close() error { return p.w.Close() }
