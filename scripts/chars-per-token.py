# scripts/chars-per-token.py BIN TOKENIZER WORKDIR LABEL DATAPOINTS.jsonl PREDICTIONS.jsonl
# chars/token (exact Qwen2.5 counts via `repoctx tokens`) of what the planner budgets per datapoint:
# prefix+suffix as predict gives them (its overrides when it trims) + context; also each part alone.
import json, os, subprocess, sys, statistics
bin, tok, work, label, dpf, pred = sys.argv[1:7]
os.makedirs(work, exist_ok=True)
dps = [json.loads(l) for l in open(dpf)]
texts = {}
for i, (d, l) in enumerate(zip(dps, open(pred))):
    p = json.loads(l)
    pre = p.get("prefix") if p.get("prefix") is not None else d["prefix"]
    suf = p.get("suffix") if p.get("suffix") is not None else d["suffix"]
    texts[f"ps-{i}"] = pre + suf
    texts[f"ctx-{i}"] = p["context"]
    texts[f"all-{i}"] = p["context"] + pre + suf
paths = []
for k, v in texts.items():
    if not v: continue
    p = os.path.join(work, k + ".txt")
    with open(p, "w", encoding="utf-8") as f: f.write(v)
    paths.append(p)
res = {}
for s in range(0, len(paths), 400):
    out = subprocess.run([bin, "tokens", "--tokenizer", tok] + paths[s:s+400], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        t, c, p = line.split("\t")
        res[os.path.basename(p)[:-4]] = (int(t), int(c))
def q(xs, f):
    xs = sorted(xs); return xs[min(len(xs)-1, max(0, round(f*(len(xs)-1))))]
for kind in ["all", "ps", "ctx"]:
    rows = [v for k, v in res.items() if k.startswith(kind + "-") and v[0] > 0]
    r = [c / t for t, c in rows]
    T = sum(t for t, _ in rows); C = sum(c for _, c in rows)
    print(f"{label}\t{kind}\tn={len(rows)}\tpooled={C/T:.3f}\tmean={statistics.mean(r):.3f}\tp5={q(r,.05):.3f}\tp50={q(r,.5):.3f}\tp95={q(r,.95):.3f}\tmin={min(r):.3f}\ttokens_mean={T/len(rows):.0f}")
