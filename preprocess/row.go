package preprocess

import "github.com/repoctx/repoctx/chunker"

// Schema is the version of the chunk record (Row) that the JSONL and Parquet writers
// write, in its "schema" field. Bump it when a field changes meaning or goes away;
// adding a field keeps the version. Version 2: limit (parse_error no longer means a
// wall-clock time-out). Version 3: name is a merged chunk's first definition's name,
// no longer all of them joined by ", "; names lists them.
const Schema = 3

// Row is one chunk as the JSONL and Parquet writers write it: one JSON object per
// line (jsonl) or one row (parquet), with the same names. The fields are those of
// chunker.Chunk (same JSON names and meaning), every one always present, plus Schema
// and FileSHA256. docs/chunks.md ("Chunk schema") documents it.
type Row struct {
	// Schema is the package's Schema constant.
	Schema int `json:"schema" parquet:"schema"`
	// ID is "{path}#{ordinal}".
	ID string `json:"id" parquet:"id"`
	// Path is the file's slash path: relative to the folder walked, or as given.
	Path string `json:"path" parquet:"path,dict"`
	// Lang is the grammar name, or "" for text of no registered language.
	Lang string `json:"lang" parquet:"lang,dict"`
	// Ordinal is the chunk's 0-based position in its file.
	Ordinal int `json:"ordinal" parquet:"ordinal"`
	// Kind is function, class, property, code or window.
	Kind string `json:"kind" parquet:"kind,dict"`
	// Name is the defined name of a definition chunk (a merged chunk's first
	// definition's), else "".
	Name string `json:"name" parquet:"name"`
	// Names lists the names of the definitions the chunk holds, in file order: several
	// for a merged chunk, [Name] for a definition chunk, empty for a chunk with no name.
	Names []string `json:"names" parquet:"names,list"`
	// StartLine and EndLine are 1-based, inclusive lines of the decoded text.
	StartLine int `json:"start_line" parquet:"start_line"`
	EndLine   int `json:"end_line" parquet:"end_line"`
	// StartByte and EndByte are a 0-based, half-open byte range of the decoded text
	// (UTF-8, BOM removed, CRLF as LF), not of the raw file.
	StartByte int `json:"start_byte" parquet:"start_byte"`
	EndByte   int `json:"end_byte" parquet:"end_byte"`
	// Header holds the signatures of the enclosing definitions, outermost first.
	Header []string `json:"header" parquet:"header,list"`
	// Parent, Prev and Next are chunk IDs in the same file, or "".
	Parent string `json:"parent" parquet:"parent"`
	Prev   string `json:"prev" parquet:"prev"`
	Next   string `json:"next" parquet:"next"`
	// Fallback reports a line or rune window cut where no syntax boundary served.
	Fallback bool `json:"fallback" parquet:"fallback"`
	// ParseError reports that the chunk overlaps ERROR or MISSING nodes, or is a
	// window of a file whose parse failed or ran over its CPU time limit.
	ParseError bool `json:"parse_error" parquet:"parse_error"`
	// Limit names the limit that made the whole file windows: "nesting", "parse_cpu"
	// or "parse_error" (see chunker.Limit), else "".
	Limit string `json:"limit" parquet:"limit,dict"`
	// FileSHA256 is the lower-case hex SHA-256 of the file's raw bytes (as on disk).
	FileSHA256 string `json:"file_sha256" parquet:"file_sha256,dict"`
	// Text is the chunk's text: the decoded file text [StartByte, EndByte).
	Text string `json:"text" parquet:"text"`
}

// NewRow makes the record of chunk k of a file whose raw bytes hash (hex SHA-256)
// to sha. A nil Header becomes an empty list.
func NewRow(k chunker.Chunk, sha string) Row {
	h := k.Header
	if h == nil {
		h = []string{}
	}
	names := k.DefNames()
	if names == nil {
		names = []string{}
	}
	return Row{Schema: Schema, ID: k.ID, Path: k.Path, Lang: k.Lang, Ordinal: k.Ordinal, Kind: string(k.Kind),
		Name: k.Name, Names: names, StartLine: k.StartLine, EndLine: k.EndLine, StartByte: k.StartByte, EndByte: k.EndByte,
		Header: h, Parent: k.Parent, Prev: k.Prev, Next: k.Next, Fallback: k.Fallback, ParseError: k.ParseError,
		Limit: string(k.Limit), FileSHA256: sha, Text: k.Text}
}
