package hugot

// Design note: the token limit from the ONNX graph.
//
// A BERT-style encoder adds a learned position embedding to every token: a table of
// P rows, one per position, gathered by the position ids 0..n-1. A text of more than
// P tokens has no row for its last positions (ONNX Runtime fails, other runtimes
// read garbage), so P bounds the model's input whatever its config files say.
// positionRows finds the table without loading the model: it streams the ModelProto
// with protowire, skipping tensor data, and keeps the graph's inputs, its 2-D
// initializers (name, rows) and its Gather nodes. The table is the initializer named
// like Hugging Face's "embeddings.position_embeddings.weight", else the only 2-D
// initializer a Gather (axis 0) reads with indices that are not a graph input: the
// word and token-type tables are gathered by the inputs input_ids and
// token_type_ids, the position table by ids the graph computes (a Range, a Slice of
// a position_ids buffer). A graph with none (rotary or ALiBi positions) or several
// such candidates gives 0: unknown.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ONNX field numbers (onnx.proto3) of the messages positionRows reads.
const (
	modelGraph       = 7  // ModelProto.graph
	graphNode        = 1  // GraphProto.node
	graphInitializer = 5  // GraphProto.initializer
	graphInput       = 11 // GraphProto.input
	nodeInput        = 1  // NodeProto.input
	nodeOpType       = 4  // NodeProto.op_type
	nodeAttribute    = 5  // NodeProto.attribute
	attrName         = 1  // AttributeProto.name
	attrInt          = 3  // AttributeProto.i
	tensorDims       = 1  // TensorProto.dims
	tensorName       = 8  // TensorProto.name
	valueInfoName    = 1  // ValueInfoProto.name
)

// maxProtoString bounds the strings positionRows keeps (names, op types), in bytes.
const maxProtoString = 4096

// pbReader reads protobuf wire format from a stream, counting the bytes consumed.
type pbReader struct {
	r   *bufio.Reader
	pos int64
}

func (p *pbReader) ReadByte() (byte, error) {
	b, err := p.r.ReadByte()
	if err == nil {
		p.pos++
	}
	return b, err
}

func (p *pbReader) varint() (uint64, error) { return binary.ReadUvarint(p) }

func (p *pbReader) skip(n int64) error {
	for n > 0 {
		m, err := p.r.Discard(int(min(n, 1<<30)))
		p.pos += int64(m)
		n -= int64(m)
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *pbReader) bytes(n int64) ([]byte, error) {
	b := make([]byte, n)
	m, err := io.ReadFull(p.r, b)
	p.pos += int64(m)
	return b, err
}

// fields calls fn for every field of the message that ends at byte end (the stream's
// end for -1). For a varint field v is its value; for a length-delimited field v is
// its length, and fn must consume exactly that many bytes (return errSkip to have
// them skipped). Fixed-size fields are skipped.
func (p *pbReader) fields(end int64, fn func(num protowire.Number, typ protowire.Type, v uint64) error) error {
	for end < 0 || p.pos < end {
		tag, err := p.varint()
		if err == io.EOF && end < 0 {
			return nil
		}
		if err != nil {
			return err
		}
		num, typ := protowire.DecodeTag(tag)
		switch typ {
		case protowire.VarintType:
			v, err := p.varint()
			if err != nil {
				return err
			}
			if err := fn(num, typ, v); err != nil && err != errSkip {
				return err
			}
		case protowire.BytesType:
			n, err := p.varint()
			if err != nil {
				return err
			}
			if end >= 0 && p.pos+int64(n) > end {
				return errors.New("field runs past its message")
			}
			start := p.pos
			if err := fn(num, typ, n); err == errSkip {
				if err := p.skip(int64(n)); err != nil {
					return err
				}
			} else if err != nil {
				return err
			} else if p.pos != start+int64(n) {
				return errors.New("field not consumed")
			}
		case protowire.Fixed32Type:
			if err := p.skip(4); err != nil {
				return err
			}
		case protowire.Fixed64Type:
			if err := p.skip(8); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unsupported wire type %d", typ)
		}
	}
	if p.pos != end {
		return errors.New("message runs past its end")
	}
	return nil
}

var errSkip = errors.New("skip")

// str reads a length-delimited string of n bytes, keeping at most maxProtoString.
func (p *pbReader) str(n uint64) (string, error) {
	if n > maxProtoString {
		return "", p.skip(int64(n))
	}
	b, err := p.bytes(int64(n))
	return string(b), err
}

// onnxGraph is what positionRows keeps of a graph.
type onnxGraph struct {
	inputs  map[string]bool  // graph inputs that are not initializers (IR < 4 lists both)
	inits   map[string]bool  // every initializer
	tables  map[string]int64 // 2-D initializers: name -> rows
	gathers [][2]string      // Gather nodes with axis 0: data, indices
}

// positionRows returns the number of rows of the position-embedding table of the
// ONNX model at path, 0 when the graph has none it can tell (see the design note),
// and an error when the file cannot be read or is not an ONNX model.
func positionRows(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	p := &pbReader{r: bufio.NewReaderSize(f, 64<<10)}
	g := onnxGraph{inputs: map[string]bool{}, inits: map[string]bool{}, tables: map[string]int64{}}
	sawGraph := false
	err = p.fields(-1, func(num protowire.Number, typ protowire.Type, v uint64) error {
		if num != modelGraph || typ != protowire.BytesType {
			return errSkip
		}
		sawGraph = true
		return p.graph(p.pos+int64(v), &g)
	})
	if err != nil {
		return 0, fmt.Errorf("%s: not an ONNX model: %w", path, err)
	}
	if !sawGraph {
		return 0, fmt.Errorf("%s: not an ONNX model: no graph", path)
	}
	for name, rows := range g.tables {
		if strings.Contains(name, "position_embeddings") {
			return int(rows), nil
		}
	}
	cand := map[string]bool{}
	for _, gt := range g.gathers {
		if _, ok := g.tables[gt[0]]; ok && (!g.inputs[gt[1]] || g.inits[gt[1]]) {
			cand[gt[0]] = true
		}
	}
	if len(cand) != 1 {
		return 0, nil
	}
	for name := range cand {
		return int(g.tables[name]), nil
	}
	return 0, nil
}

func (p *pbReader) graph(end int64, g *onnxGraph) error {
	return p.fields(end, func(num protowire.Number, typ protowire.Type, v uint64) error {
		if typ != protowire.BytesType {
			return errSkip
		}
		msgEnd := p.pos + int64(v)
		switch num {
		case graphInput:
			return p.fields(msgEnd, func(num protowire.Number, typ protowire.Type, v uint64) error {
				if num != valueInfoName || typ != protowire.BytesType {
					return errSkip
				}
				s, err := p.str(v)
				g.inputs[s] = true
				return err
			})
		case graphInitializer:
			var name string
			var dims []int64
			err := p.fields(msgEnd, func(num protowire.Number, typ protowire.Type, v uint64) error {
				switch {
				case num == tensorName && typ == protowire.BytesType:
					var err error
					name, err = p.str(v)
					return err
				case num == tensorDims && typ == protowire.VarintType:
					dims = append(dims, int64(v))
					return nil
				case num == tensorDims && typ == protowire.BytesType: // packed
					b, err := p.bytes(int64(v))
					for len(b) > 0 && err == nil {
						d, n := protowire.ConsumeVarint(b)
						if n < 0 {
							return errors.New("bad packed dims")
						}
						dims, b = append(dims, int64(d)), b[n:]
					}
					return err
				}
				return errSkip
			})
			g.inits[name] = true
			if err == nil && len(dims) == 2 && dims[0] > 0 {
				g.tables[name] = dims[0]
			}
			return err
		case graphNode:
			var inputs []string
			op, axis := "", int64(0)
			err := p.fields(msgEnd, func(num protowire.Number, typ protowire.Type, v uint64) error {
				if typ != protowire.BytesType {
					return errSkip
				}
				switch num {
				case nodeInput:
					s, err := p.str(v)
					inputs = append(inputs, s)
					return err
				case nodeOpType:
					var err error
					op, err = p.str(v)
					return err
				case nodeAttribute:
					var name string
					var i int64
					err := p.fields(p.pos+int64(v), func(num protowire.Number, typ protowire.Type, v uint64) error {
						switch {
						case num == attrName && typ == protowire.BytesType:
							var err error
							name, err = p.str(v)
							return err
						case num == attrInt && typ == protowire.VarintType:
							i = int64(v)
							return nil
						}
						return errSkip
					})
					if name == "axis" {
						axis = i
					}
					return err
				}
				return errSkip
			})
			if err == nil && op == "Gather" && axis == 0 && len(inputs) == 2 {
				g.gathers = append(g.gathers, [2]string{inputs[0], inputs[1]})
			}
			return err
		}
		return errSkip
	})
}
