#!/usr/bin/env python3
"""Generate testdata/models/tiny-bert: a tiny BERT-style sentence encoder for repoctx's tests.

Writes, next to this script, the folder tiny-bert/ laid out like a Hugging Face model
folder as hugot reads it:

  model.onnx      2-layer BERT encoder (hidden 32, 4 heads, FFN 64, 64 positions) with
                  random weights (numpy RandomState(20261129)); inputs input_ids,
                  attention_mask, token_type_ids (int64 [batch, seq]); output
                  last_hidden_state (float32 [batch, seq, 32]). Plain ONNX ops only
                  (opset 14; LayerNorm and GELU decomposed as in exported BERT models).
  tokenizer.json  WordPiece tokenizer (BertNormalizer lowercase + strip_accents null,
                  BertPreTokenizer, [CLS] A [SEP] template) with a small code vocabulary.
                  Its "truncation" (max_length 16) is deliberately shorter than the model's
                  limit: repoctx must switch it off and truncate explicitly.
  config.json     max_position_embeddings 64 (the model's token limit, [CLS]/[SEP] included).
  expected.json   for a few sentences: the word-piece ids and the mean-pooled, L2-normalised
                  sentence embedding, computed here with numpy from the same weights and an
                  independent Python WordPiece tokenizer (no ONNX runtime involved).

Run it with Debian's python3-onnx and python3-numpy (apt-get install -y python3-onnx):

  /usr/bin/python3 testdata/models/gen_tiny_bert.py

The output is deterministic. Tests only read the generated files; they never need Python.
"""

import json
import math
import os
import sys
import unicodedata

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny-bert")

HIDDEN, HEADS, FFN, LAYERS, MAX_POS, VOCAB_ROWS = 32, 4, 64, 2, 64, 0
# --minilm-size DIR writes instead a model with all-MiniLM-L6-v2's shapes (6 layers,
# hidden 384, 12 heads, FFN 1536, 512 positions, 30522 vocabulary rows) and random
# weights, for throughput benchmarks only (about 90 MB: never commit it). Speed depends
# on the shapes, not on the weights.
MINILM = len(sys.argv) == 3 and sys.argv[1] == "--minilm-size"
if MINILM:
    OUT = sys.argv[2]
    HIDDEN, HEADS, FFN, LAYERS, MAX_POS, VOCAB_ROWS = 384, 12, 1536, 6, 512, 30522
HEAD_DIM = HIDDEN // HEADS
EPS = 1e-12

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = """def return self class the cache get set value key for in if else import from fun val
cafe http response parse request data list map string int none true false print len entries evict
eldest load env settings slug title json reader object user name file path read write open close
error count size max min sum total index item items node tree search query""".split()
PIECES = ["##ing", "##ed", "##s", "##er", "##tion", "##ly", "##es"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789")
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def vocab():
    toks = SPECIAL + CHARS + PUNCT + ["##" + c for c in CHARS] + WORDS + PIECES
    seen, out = set(), []
    for t in toks:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return {t: i for i, t in enumerate(out)}


VOCAB = vocab()


# ---- an independent BERT tokenizer (BasicTokenizer + WordpieceTokenizer) ----

def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def is_ws(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def basic(text):
    text = "".join(" " if is_ws(c) else c for c in text if not (ord(c) in (0, 0xFFFD) or is_control(c)))
    # strip_accents is null in tokenizer.json, so it follows lowercase (true): NFD, drop Mn.
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    text = text.lower()
    words, cur = [], ""
    for c in text:
        if is_ws(c):
            if cur:
                words.append(cur)
            cur = ""
        elif is_punct(c):
            if cur:
                words.append(cur)
            words.append(c)
            cur = ""
        else:
            cur += c
    if cur:
        words.append(cur)
    return words


def wordpiece(word):
    if len(word) > 100:
        return ["[UNK]"]
    out, start = [], 0
    while start < len(word):
        end, piece = len(word), None
        while start < end:
            sub = word[start:end]
            if start > 0:
                sub = "##" + sub
            if sub in VOCAB:
                piece = sub
                break
            end -= 1
        if piece is None:
            return ["[UNK]"]
        out.append(piece)
        start = end
    return out


def encode(text, limit=MAX_POS, keep="head"):
    """Word-piece ids with [CLS]/[SEP], at most limit of them. keep="head" keeps the first
    limit-2 pieces (as Hugging Face truncates); keep="tail" drops whole words from the
    front until the rest fits (a text can only start at a word, not inside one)."""
    words = [wordpiece(w) for w in basic(text)]
    n = limit - 2
    if keep == "head":
        pieces = [p for w in words for p in w][:n]
    else:
        while sum(len(w) for w in words) > n:
            words.pop(0)
        pieces = [p for w in words for p in w]
    return [VOCAB["[CLS]"]] + [VOCAB[p] for p in pieces] + [VOCAB["[SEP]"]]


# ---- weights ----

rng = np.random.RandomState(20261129)


def w(*shape, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


W = {
    "word": w(max(len(VOCAB), VOCAB_ROWS), HIDDEN, scale=1.0),
    "pos": w(MAX_POS, HIDDEN, scale=0.5),
    "type": w(2, HIDDEN, scale=0.5),
    "emb_g": (1 + w(HIDDEN, scale=0.1)),
    "emb_b": w(HIDDEN, scale=0.1),
}
for l in range(LAYERS):
    for n in ("q", "k", "v", "o"):
        W[f"l{l}.{n}.w"] = w(HIDDEN, HIDDEN, scale=1 / math.sqrt(HIDDEN))
        W[f"l{l}.{n}.b"] = w(HIDDEN, scale=0.05)
    W[f"l{l}.ln1.g"] = 1 + w(HIDDEN, scale=0.1)
    W[f"l{l}.ln1.b"] = w(HIDDEN, scale=0.1)
    W[f"l{l}.f1.w"] = w(HIDDEN, FFN, scale=1 / math.sqrt(HIDDEN))
    W[f"l{l}.f1.b"] = w(FFN, scale=0.05)
    W[f"l{l}.f2.w"] = w(FFN, HIDDEN, scale=1 / math.sqrt(FFN))
    W[f"l{l}.f2.b"] = w(HIDDEN, scale=0.05)
    W[f"l{l}.ln2.g"] = 1 + w(HIDDEN, scale=0.1)
    W[f"l{l}.ln2.b"] = w(HIDDEN, scale=0.1)


# ---- numpy forward pass (the reference) ----

def np_ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    d = x - m
    v = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(v + EPS) * g + b


def np_gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)).astype(np.float64))


def np_forward(ids):
    ids = np.array(ids)
    s = len(ids)
    x = W["word"][ids].astype(np.float64) + W["pos"][:s] + W["type"][0]
    x = np_ln(x, W["emb_g"], W["emb_b"])
    for l in range(LAYERS):
        def lin(t, n):
            return t @ W[f"l{l}.{n}.w"] + W[f"l{l}.{n}.b"]
        q = lin(x, "q").reshape(s, HEADS, HEAD_DIM).transpose(1, 0, 2)
        k = lin(x, "k").reshape(s, HEADS, HEAD_DIM).transpose(1, 0, 2)
        v = lin(x, "v").reshape(s, HEADS, HEAD_DIM).transpose(1, 0, 2)
        sc = q @ k.transpose(0, 2, 1) / math.sqrt(HEAD_DIM)
        sc = sc - sc.max(-1, keepdims=True)
        p = np.exp(sc)
        p = p / p.sum(-1, keepdims=True)
        ctx = (p @ v).transpose(1, 0, 2).reshape(s, HIDDEN)
        x = np_ln(x + lin(ctx, "o"), W[f"l{l}.ln1.g"], W[f"l{l}.ln1.b"])
        h = np_gelu(x @ W[f"l{l}.f1.w"] + W[f"l{l}.f1.b"])
        x = np_ln(x + h @ W[f"l{l}.f2.w"] + W[f"l{l}.f2.b"], W[f"l{l}.ln2.g"], W[f"l{l}.ln2.b"])
    e = x.mean(0)
    return e / np.linalg.norm(e)


# ---- the ONNX graph ----

nodes, inits = [], []
counter = [0]


def name(p):
    counter[0] += 1
    return f"{p}_{counter[0]}"


def const(arr, p="c"):
    n = name(p)
    inits.append(numpy_helper.from_array(np.asarray(arr), n))
    return n


def op(kind, inputs, p=None, **attrs):
    out = name(p or kind.lower())
    nodes.append(helper.make_node(kind, inputs, [out], **attrs))
    return out


def init(key):
    n = key.replace(".", "_")
    inits.append(numpy_helper.from_array(W[key], n))
    return n


def onnx_ln(x, g, b):
    m = op("ReduceMean", [x], axes=[-1], keepdims=1)
    d = op("Sub", [x, m])
    v = op("ReduceMean", [op("Pow", [d, const(np.float32(2))])], axes=[-1], keepdims=1)
    y = op("Div", [d, op("Sqrt", [op("Add", [v, const(np.float32(EPS))])])])
    return op("Add", [op("Mul", [y, init(g)]), init(b)])


def linear(x, key):
    return op("Add", [op("MatMul", [x, init(key + ".w")]), init(key + ".b")])


seq = op("Gather", [op("Shape", ["input_ids"]), const(np.int64(1))], axis=0)
positions = op("Range", [const(np.int64(0)), seq, const(np.int64(1))])
x = op("Add", [op("Gather", [init("word"), "input_ids"], axis=0),
               op("Gather", [init("pos"), positions], axis=0)])
x = op("Add", [x, op("Gather", [init("type"), "token_type_ids"], axis=0)])
x = onnx_ln(x, "emb_g", "emb_b")
maskf = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
ext = op("Mul", [op("Sub", [const(np.float32(1)), maskf]), const(np.float32(-10000))])
ext = op("Unsqueeze", [ext, const(np.array([1, 2], dtype=np.int64))])  # [B,1,1,S]
heads_shape = const(np.array([0, 0, HEADS, HEAD_DIM], dtype=np.int64))
hidden_shape = const(np.array([0, 0, HIDDEN], dtype=np.int64))
for l in range(LAYERS):
    q = op("Transpose", [op("Reshape", [linear(x, f"l{l}.q"), heads_shape])], perm=[0, 2, 1, 3])
    k = op("Transpose", [op("Reshape", [linear(x, f"l{l}.k"), heads_shape])], perm=[0, 2, 3, 1])
    v = op("Transpose", [op("Reshape", [linear(x, f"l{l}.v"), heads_shape])], perm=[0, 2, 1, 3])
    sc = op("Div", [op("MatMul", [q, k]), const(np.float32(math.sqrt(HEAD_DIM)))])
    p = op("Softmax", [op("Add", [sc, ext])], axis=-1)
    ctx = op("Reshape", [op("Transpose", [op("MatMul", [p, v])], perm=[0, 2, 1, 3]), hidden_shape])
    x = onnx_ln(op("Add", [x, linear(ctx, f"l{l}.o")]), f"l{l}.ln1.g", f"l{l}.ln1.b")
    h = linear(x, f"l{l}.f1")
    h = op("Mul", [op("Mul", [h, const(np.float32(0.5))]),
                   op("Add", [op("Erf", [op("Div", [h, const(np.float32(math.sqrt(2)))])]), const(np.float32(1))])])
    x = onnx_ln(op("Add", [x, linear(h, f"l{l}.f2")]), f"l{l}.ln2.g", f"l{l}.ln2.b")
nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

dyn = ["batch_size", "sequence_length"]
graph = helper.make_graph(
    nodes, "tiny_bert",
    [helper.make_tensor_value_info(n, TensorProto.INT64, dyn) for n in ("input_ids", "attention_mask", "token_type_ids")],
    [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dyn + [HIDDEN])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="repoctx gen_tiny_bert.py")
model.ir_version = 7
onnx.checker.check_model(model)

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "model.onnx"), "wb") as f:
    f.write(model.SerializeToString())


def special(tok):
    return {"id": VOCAB[tok], "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


tokenizer = {
    "version": "1.0",
    "truncation": {"direction": "Right", "max_length": 16, "strategy": "LongestFirst", "stride": 0},
    "padding": None,
    "added_tokens": [special(t) for t in SPECIAL],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
        "special_tokens": {t: {"id": t, "ids": [VOCAB[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
    },
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100, "vocab": VOCAB},
}
with open(os.path.join(OUT, "tokenizer.json"), "w") as f:
    json.dump(tokenizer, f, indent=1, ensure_ascii=False)
    f.write("\n")

config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": HIDDEN,
          "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": FFN,
          "max_position_embeddings": MAX_POS, "type_vocab_size": 2, "vocab_size": max(len(VOCAB), VOCAB_ROWS),
          "pad_token_id": 0, "hidden_act": "gelu", "layer_norm_eps": EPS}
with open(os.path.join(OUT, "config.json"), "w") as f:
    json.dump(config, f, indent=1)
    f.write("\n")

if MINILM:
    with open(os.path.join(OUT, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 256, "do_lower_case": False}, f)
    print("wrote", OUT)
    sys.exit(0)

long_text = " ".join(["def load_settings(self, path): return read_json(path)"] * 12)
cases = [
    {"name": "short", "text": "def get(self, key): return self.cache[key]", "keep": "head"},
    {"name": "accents", "text": "Café Résumé: print(user.name)", "keep": "head"},
    {"name": "code", "text": "val entries = LinkedHashMap<K, V>()\nfun evict() { entries.remove(eldest) }", "keep": "head"},
    {"name": "long-head", "text": long_text + " tail_marker_zzz", "keep": "head"},
    {"name": "long-tail", "text": "head_marker_qqq " + long_text, "keep": "tail"},
]
for c in cases:
    all_ids = encode(c["text"], limit=10**9)
    ids = encode(c["text"], keep=c["keep"])
    c["ids"] = ids
    c["truncated"] = len(all_ids) > MAX_POS
    c["embedding"] = [round(float(v), 7) for v in np_forward(ids)]
with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump({"limit": MAX_POS, "dim": HIDDEN, "cases": cases}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("wrote", OUT, "vocab", len(VOCAB), "onnx bytes", os.path.getsize(os.path.join(OUT, "model.onnx")))
