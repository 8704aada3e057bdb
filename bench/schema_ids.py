#!/usr/bin/env python3
"""What restricting `chunk_id` to an enum of the retrieved IDs buys (issue 21).

Asks the service's OpenAI-compatible endpoint (the embedded model decoding
under the request's schema alone) each question of a suite twice: once with
`chunk_id` an enum of the request's chunk IDs (the schema groundcite sent
before issue 21, new per request), once with `chunk_id` a plain string (one
schema for every request, so warm-up and provider caches work). Reports the
share of citations whose chunk_id is not one of the request's chunks (the
verifier drops them) and the output length.

Usage: bench/schema_ids.py GROUNDCITE_BINARY [SUITE.toml] [N]
Starts `serve --no-auth` on a free loopback port; needs the embedded model.
"""

import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSTEM = None  # read from the core's prompt module, the one the CLI sends


def system_prompt():
    src = (ROOT / "crates/groundcite-core/src/prompt.rs").read_text()
    m = re.search(r'pub const SYSTEM_PROMPT: &str = "(.*?)";', src, re.S)
    return m.group(1).replace('\\"', '"')


def chunks_of(docs: Path):
    """Paragraph chunks per document, IDs as the index names them."""
    out = {}
    for p in sorted(docs.rglob("*.md")):
        rel = p.relative_to(docs).as_posix()
        paras = [x.strip() for x in p.read_text().split("\n\n") if x.strip()]
        out[rel] = [(f"{rel}#chunk-{i + 1}", t) for i, t in enumerate(paras)]
    return out


def schema(binary, chunks_file, enum):
    args = [binary, "schema", "--target", "openai"]
    if enum:
        args += ["--chunk-ids-from", chunks_file]
    frag = json.loads(subprocess.check_output(args))
    return frag["response_format"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(port, body, timeout=600):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def main():
    binary = sys.argv[1]
    suite = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "eval/sample.toml"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    spec = tomllib.loads(suite.read_text())
    docs = (suite.parent / spec["corpus"]["docs"]).resolve()
    by_doc = chunks_of(docs)
    cases = [c for c in spec["cases"] if c.get("gold_chunks")][:n]
    system = system_prompt()
    port = free_port()
    tmp = tempfile.mkdtemp()
    serve = subprocess.Popen(
        [binary, "serve", "--no-auth", "--no-warmup", "--addr", f"127.0.0.1:{port}",
         "--database", f"{tmp}/t.sqlite3", "--log-format", "text",
         "--request-timeout", "1800"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.5)
        totals = {True: [0, 0, 0, 0], False: [0, 0, 0, 0]}  # citations, invented, tokens, answers
        for case in cases:
            gold_doc = case["gold_chunks"][0].split("#")[0]
            picked = by_doc.get(gold_doc, [])[:3]
            chunks = [{"chunk_id": i, "content": t} for i, t in picked]
            ids = {c["chunk_id"] for c in chunks}
            cf = Path(tmp) / "chunks.json"
            cf.write_text(json.dumps(chunks))
            user = "Sources:\n" + "\n\n".join(
                f"[chunk_id: {c['chunk_id']}]\n{c['content']}" for c in chunks
            ) + f"\n\nQuestion: {case['question']}"
            for enum in (True, False):
                body = {
                    "model": "local",
                    "messages": [{"role": "system", "content": system},
                                 {"role": "user", "content": user}],
                    "response_format": schema(binary, str(cf), enum),
                    "max_tokens": 400,
                }
                t = totals[enum]
                try:
                    r = post(port, body, timeout=1800)
                except urllib.error.HTTPError as e:
                    print(f"{case['id']}: HTTP {e.code}", file=sys.stderr)
                    continue
                text = r["choices"][0]["message"]["content"] or ""
                t[2] += r.get("usage", {}).get("completion_tokens", 0)
                t[3] += 1
                try:
                    ans = json.loads(text)
                except json.JSONDecodeError:
                    continue
                for cl in ans.get("claims", []):
                    for ci in cl.get("citations", []):
                        t[0] += 1
                        if ci.get("chunk_id") not in ids:
                            t[1] += 1
        for enum in (True, False):
            c, inv, tok, k = totals[enum]
            label = "enum of retrieved IDs" if enum else "plain string"
            share = f"{inv}/{c} ({100 * inv / c:.0f}%)" if c else "0/0"
            print(f"{label:22} answers {k}, citations {c}, invented IDs {share}, "
                  f"mean output tokens {tok / max(k, 1):.0f}")
    finally:
        serve.terminate()
        serve.wait()


if __name__ == "__main__":
    main()
