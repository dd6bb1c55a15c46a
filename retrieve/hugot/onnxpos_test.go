package hugot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestPositionRows reads the position table of the tiny test model (an initializer
// named "pos", gathered by a Range) and of hand-made graphs.
func TestPositionRows(t *testing.T) {
	if n, err := positionRows(filepath.Join(tinyBERT, "model.onnx")); err != nil || n != 64 {
		t.Errorf("tiny-bert: %d rows, %v; want 64", n, err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		graph []byte
		want  int
	}{
		{"hugging face name", graph(initializer("embeddings.position_embeddings.weight", 514, 768), initializer("embeddings.word_embeddings.weight", 50265, 768)), 514},
		{"gathered by computed ids", graph(input("input_ids"), initializer("word", 100, 8), initializer("table", 40, 8), gather("word", "input_ids"), gather("table", "range_out")), 40},
		{"two candidates", graph(initializer("a", 40, 8), initializer("b", 2, 8), gather("a", "x"), gather("b", "y")), 0},
		{"rotary: no table", graph(input("input_ids"), initializer("word", 100, 8), gather("word", "input_ids")), 0},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".onnx")
		os.WriteFile(p, model(tc.graph), 0o644)
		if n, err := positionRows(p); err != nil || n != tc.want {
			t.Errorf("%s: %d rows, %v; want %d", tc.name, n, err, tc.want)
		}
	}
	bad := filepath.Join(dir, "bad.onnx")
	os.WriteFile(bad, []byte("not a model at all\xff\xff\xff"), 0o644)
	if _, err := positionRows(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("garbage: %v, want an error naming the file", err)
	}
}

func bytesField(num protowire.Number, b []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
}

func model(graph []byte) []byte {
	b := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 8) // ir_version
	return append(b, bytesField(modelGraph, graph)...)
}

func graph(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func initializer(name string, dims ...int64) []byte {
	var t []byte
	for _, d := range dims {
		t = protowire.AppendVarint(protowire.AppendTag(t, tensorDims, protowire.VarintType), uint64(d))
	}
	t = append(t, bytesField(tensorName, []byte(name))...)
	t = append(t, bytesField(9, make([]byte, 64))...) // raw_data, skipped
	return bytesField(graphInitializer, t)
}

func input(name string) []byte {
	return bytesField(graphInput, bytesField(valueInfoName, []byte(name)))
}

func gather(data, indices string) []byte {
	n := append(bytesField(nodeInput, []byte(data)), bytesField(nodeInput, []byte(indices))...)
	n = append(n, bytesField(nodeOpType, []byte("Gather"))...)
	return bytesField(graphNode, n)
}
