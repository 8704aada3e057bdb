#!/usr/bin/env python3
"""Generates the reference fixtures of groundcite-embed's parity tests.

- tokens.json: token IDs of varied texts from Hugging Face's own tokenizer
  (the `tokenizers` package loading the model's tokenizer.json), untruncated
  and truncated to 256 tokens as sentence-transformers does.
- vectors.json: embeddings of a few texts from an independent
  implementation written here in plain NumPy (no torch, no
  sentence-transformers) over the same model.safetensors: BERT encoder in
  float64, mean pooling, L2 normalisation.

Run it in a throwaway virtual environment with the pinned packages:

    python3 -m venv /tmp/embed-fixtures
    /tmp/embed-fixtures/bin/pip install tokenizers==0.23.3 safetensors==0.8.0 numpy==2.4.6
    scripts/fetch-embed-model
    /tmp/embed-fixtures/bin/python testdata/embed/gen_fixtures.py [MODEL_DIR]

MODEL_DIR defaults to the cache directory scripts/fetch-embed-model fills.
"""

import json
import math
import os
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
MAX_TOKENS = 256


def model_dir() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    if os.environ.get("GROUNDCITE_CACHE_DIR"):
        cache = Path(os.environ["GROUNDCITE_CACHE_DIR"])
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache")
        cache = Path(base) / "groundcite"
    return cache / "models" / "all-MiniLM-L6-v2"


LONG_WORD = "pneumonoultramicroscopicsilicovolcanoconiosis"
LONG_TEXT = " ".join(
    ["The Trailhead 2 tent (model TH-2, $349.00) packs down to 2.1 kg; its poles are 7001-T6 aluminium."] * 30
)

TOKEN_TEXTS = [
    "",
    " ",
    "\t\n\r  \u3000",
    "Hello, world!",
    "How long do refunds take?",
    "Refunds are issued within 5 business days.",
    "The price is $14.95 (was $19.99) — save 25%!",
    "Ages 3-5, 10–12 and 2024-01-31T12:00:00Z.",
    "Call +1 (555) 010-9999 or e-mail help@example.com.",
    "Ünïcödé café naïve résumé Straße ÆØÅ œuvre",
    "İstanbul, Ǆemal, ǅ, ﬁ ligature, Ⅻ, ①, ²",
    "野口里佳 Noguchi Rika 東京都 日本語のテキスト",
    "한국어 텍스트와 カタカナ ひらがな",
    "Москва — столица России. Ελληνικά κείμενα.",
    "مرحبا بالعالم שלום עולם",
    "हिन्दी पाठ और ภาษาไทย",
    "Emoji: 😀🤗🥰👍🏽 👨‍👩‍👧 🇫🇷 ❤️ ✨",
    "Tabs\tand\nnew\r\nlines\u2028and\u2029separators",
    "Zero\u200bwidth\u200cjoiners\u200dand\ufeffBOM",
    "NUL\x00byte and \x07bell \x0bvtab \x0cform \x1besc \x85nel \x7fdel",
    "Replacement \ufffd char and private \ue000\uf8ff use",
    "Combining: e\u0301 a\u0308 n\u0303 o\u0302\u0323",
    "!!!???...,,,;;;:::---",
    "#include <stdio.h> int main() { return 0; }",
    "fn main() -> Result<(), Box<dyn Error>> { println!(\"{x:?}\"); }",
    "# Heading\n\n- **bold** and _italic_ and `code`\n> quote\n[link](https://example.com/a?b=c&d=e)",
    "| col A | col B |\n|---|---|\n| 1 | 2 |",
    LONG_WORD,
    LONG_WORD * 3,
    "a" * 100,
    "a" * 101,
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "unaffable unbelievably re-evaluate co-operate",
    "hello [SEP] world [CLS][MASK] [cls] [ SEP ] [PAD]x[UNK]",
    "McDonald's don't won't y'all rock'n'roll",
    "3.14159 1,000,000 1e-9 0x1F 50/50 1/2 ½ 10^6",
    "URL https://docs.example.com/v1/ask?q=tent&lang=en#top",
    "C++ C# F# .NET Node.js ASP.NET",
    "ALL CAPS SHOUTING AND MiXeD cAsE",
    "\u00a0non\u00a0breaking\u202fnarrow\u2009thin",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ！",
    "↑↓←→ ∑∫√∞ ≠≤≥ ©®™ °C",
    LONG_TEXT,
]

VECTOR_TEXTS = [
    "",
    "How long do refunds take?",
    "When will I get my money back after returning an item?",
    "The Trailhead 2 tent sleeps two and weighs 2.1 kg.",
    "Ünïcödé café — 野口 — ¿Qué tal? 😀",
    "Express shipping arrives in 1 to 2 business days and costs $15.",
    "!!!",
    LONG_TEXT,
]


def reference_tokenizer(directory: Path) -> Tokenizer:
    tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def token_fixtures(tok: Tokenizer) -> list:
    cases = []
    for text in TOKEN_TEXTS:
        ids = tok.encode(text).ids
        tok.enable_truncation(MAX_TOKENS)
        truncated = tok.encode(text).ids
        tok.no_truncation()
        case = {"text": text, "ids": ids}
        if truncated != ids:
            case["ids_truncated"] = truncated
        cases.append(case)
    return cases


class Bert:
    """BERT encoder in float64 NumPy, from Hugging Face's BertModel."""

    def __init__(self, directory: Path):
        self.cfg = json.loads((directory / "config.json").read_text())
        self.w = {k: v.astype(np.float64) for k, v in load_file(str(directory / "model.safetensors")).items()}
        self.erf = np.frompyfunc(math.erf, 1, 1)

    def layer_norm(self, x, prefix):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        eps = self.cfg["layer_norm_eps"]
        return (x - mean) / np.sqrt(var + eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def linear(self, x, prefix):
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def gelu(self, x):
        return 0.5 * x * (1.0 + self.erf(x / math.sqrt(2.0)).astype(np.float64))

    def encode(self, ids):
        w, n = self.w, len(ids)
        heads = self.cfg["num_attention_heads"]
        d = self.cfg["hidden_size"] // heads
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self.layer_norm(x, "embeddings.LayerNorm")
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q, k, v = (
                self.linear(x, p + "attention.self." + name).reshape(n, heads, d).transpose(1, 0, 2)
                for name in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            probs = scores / scores.sum(-1, keepdims=True)
            context = (probs @ v).transpose(1, 0, 2).reshape(n, heads * d)
            x = self.layer_norm(self.linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = self.gelu(self.linear(x, p + "intermediate.dense"))
            x = self.layer_norm(self.linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def embed(self, ids):
        pooled = self.encode(ids).mean(0)
        return pooled / max(np.linalg.norm(pooled), 1e-12)


def vector_fixtures(tok: Tokenizer, bert: Bert) -> list:
    tok.enable_truncation(MAX_TOKENS)
    cases = []
    for text in VECTOR_TEXTS:
        ids = tok.encode(text).ids
        vector = bert.embed(ids)
        cases.append({"text": text, "ids": ids, "vector": [float(f"{v:.8g}") for v in vector]})
    tok.no_truncation()
    return cases


def write(name: str, cases: list) -> None:
    with open(HERE / name, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main() -> None:
    directory = model_dir()
    tok = reference_tokenizer(directory)
    write("tokens.json", token_fixtures(tok))
    write("vectors.json", vector_fixtures(tok, Bert(directory)))


if __name__ == "__main__":
    main()
