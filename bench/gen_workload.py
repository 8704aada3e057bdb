#!/usr/bin/env python3
"""Deterministic workload generator for `groundcite verify --batch`.

Writes JSONL, one request per line:

    {"question": str,
     "chunks": [{"chunk_id", "content", "source_title", "source_url",
                 "page_number", "score"}, ...],
     "answer": {"answerable": bool,
                "claims": [{"text", "citations": [{"chunk_id", "quote"}]}]}}

Chunk text is real English prose: the Python language reference shipped in
the standard library (`pydoc_data.topics`), split into paragraphs (code
blocks and grammar productions dropped), with its hard line breaks kept.
A little extra Unicode is added the way real documents carry it: some
straight quotes become curly, some " - " become em dashes, some "..."
become U+2026, "PEP 8" sometimes carries a no-break space, and a few chunks
use CRLF line endings.

Citations model what LLMs actually send back:
  * most quotes are 40-200 character substrings of the cited chunk, perturbed
    the way models perturb them (case changed, curly <-> straight quotes,
    line breaks and double spaces collapsed or introduced, padded); some are
    exact;
  * ~10% name a chunk ID that was not retrieved (about 40% of those are
    several retrieved IDs merged in one string, e.g. "a#1, b#2");
  * ~10% carry a fabricated quote (words swapped or replaced; checked not to
    match after normalization);
  * ~2% of claims repeat one of their citations verbatim.
~5% of requests are `answerable: false` with no claims. Metadata: some
source_url / page_number / source_title are null, a few URLs are not http(s).

Same --seed and options => byte-identical output.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import textwrap

import pydoc_data.topics

# The matching rule's white space (Rust's char::is_whitespace), used only to
# make sure fabricated quotes really do not match.
WS = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
WS_RUN = re.compile("[" + WS + "]+")
CURLY = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    }
)


def normalize(text: str) -> str:
    return WS_RUN.sub(" ", text.translate(CURLY).casefold()).strip(WS)


# --------------------------------------------------------------------------
# Source prose


def title_of(raw: str, key: str) -> str:
    lines = raw.splitlines()
    if len(lines) >= 2 and lines[1] and set(lines[1]) <= set("*=-^~"):
        return lines[0].strip()
    return key.replace("-", " ").capitalize()


def is_prose(par: str) -> bool:
    if "::=" in par or ">>>" in par or "..." in par.splitlines()[0][:4]:
        return False
    words = par.split()
    if len(words) < 8:
        return False
    if not par.rstrip().endswith((".", ":", ")", "?")):
        return False
    letters = sum(c.isalpha() or c == " " for c in par)
    if letters < 0.75 * len(par):
        return False
    # Code lines tend to be indented further than the first line.
    lines = par.splitlines()
    base = len(lines[0]) - len(lines[0].lstrip())
    deeper = sum(1 for ln in lines[1:] if len(ln) - len(ln.lstrip()) > base + 2)
    return deeper <= len(lines) // 3


def curly_quotes(par: str) -> str:
    par = re.sub(r'"([^"\n]{1,80})"', "\u201c\\1\u201d", par)
    return re.sub(r"(?<=[A-Za-z])'(?=[a-z])", "\u2019", par)


def load_paragraphs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(topic key, title, paragraph) in document order."""
    out = []
    for key in sorted(pydoc_data.topics.topics):
        raw = pydoc_data.topics.topics[key]
        title = title_of(raw, key)
        for block in re.split(r"\n[ \t]*\n", raw):
            block = textwrap.dedent(block.strip("\n")).rstrip()
            if not block or not is_prose(block):
                continue
            # Enrich with the Unicode real documents carry.
            if rng.random() < 0.35:
                block = curly_quotes(block)
            if rng.random() < 0.5:
                block = block.replace(" -- ", " \u2014 ").replace(" - ", " \u2014 ")
            if rng.random() < 0.3:
                block = block.replace("...", "\u2026")
            if rng.random() < 0.5:
                block = block.replace("PEP ", "PEP\u00a0")
            out.append((key, title, block))
    return out


# --------------------------------------------------------------------------
# Chunks


def make_chunk(rng, paragraphs, start, target):
    parts = []
    size = 0
    i = start
    while size < target * 1.4:
        parts.append(paragraphs[i % len(paragraphs)][2])
        size += len(parts[-1].encode()) + 2
        i += 1
    text = "\n\n".join(parts)
    # Cut at a sentence end close to the target size.
    lo, hi = int(target * 0.85), int(target * 1.15)
    cut = -1
    for m in re.finditer(r"[.:?)](?=\s)", text[: hi + 1]):
        if m.end() >= lo:
            cut = m.end()
    if cut < 0:
        cut = text.rfind(" ", 0, target)
        cut = target if cut <= 0 else cut
    return text[:cut]


def chunk_id_for(key, para_idx, style):
    if style == 0:
        return f"pyref/{key}#p{para_idx}"
    if style == 1:
        return f"{key}-{para_idx:04d}"
    return f"doc_{para_idx}"


def metadata(rng, key, title):
    r = rng.random()
    if r < 0.2:
        url = None
    elif r < 0.205:
        url = f"ftp://mirror.example.org/python/{key}.txt"
    else:
        url = f"https://docs.python.org/3/reference/{key}.html"
    page = None if rng.random() < 0.3 else rng.randint(1, 400)
    return {
        "source_title": None if rng.random() < 0.05 else title,
        "source_url": url,
        "page_number": page,
    }


# --------------------------------------------------------------------------
# Quotes


def word_starts(text):
    return [0] + [m.end() for m in re.finditer(r"\s+", text)]


def pick_quote(rng, content):
    """A 40-200 char substring of `content` on word boundaries, or None."""
    starts = word_starts(content)
    for _ in range(20):
        s = rng.choice(starts)
        want = rng.randint(40, 200)
        e = s + want
        if e >= len(content):
            continue
        # Extend to the end of the word, or back off to stay <= 200.
        m = re.compile(r"\s").search(content, e)
        end = m.start() if m else len(content)
        if end - s > 200:
            back = content.rfind(" ", s, s + 200)
            end = back if back > s else s + 200
        q = content[s:end].rstrip(WS)
        if 40 <= len(q) <= 200 and any(c.isalnum() for c in q):
            return q
    q = content[:200].rstrip(WS)
    return q if len(q) >= 10 else None


def swap_quotes(q, rng):
    if rng.random() < 0.5:
        # straight -> curly
        q = re.sub(r'"([^"]*)"', "\u201c\\1\u201d", q)
        return q.replace("'", "\u2019")
    return q.translate(CURLY)


def perturb(rng, q):
    """Perturb a quote the way models do; usually it still matches."""
    kinds = []
    r = rng.random()
    if r < 0.30:
        return q  # exact
    n = 1 if rng.random() < 0.7 else 2
    ops = ["collapse", "lower", "quotes", "upper", "capital", "introduce", "pad", "trim"]
    weights = [30, 20, 15, 4, 8, 10, 8, 5]
    for _ in range(n):
        kinds.append(rng.choices(ops, weights)[0])
    for k in kinds:
        if k == "collapse":
            q = WS_RUN.sub(" ", q)
        elif k == "lower":
            q = q.lower()
        elif k == "upper":
            q = q.upper()
        elif k == "capital":
            q = q[:1].upper() + q[1:]
        elif k == "quotes":
            q = swap_quotes(q, rng)
        elif k == "introduce":
            spaces = [m.start() for m in re.finditer(" ", q)]
            for pos in sorted(rng.sample(spaces, min(len(spaces), rng.randint(1, 2))), reverse=True):
                q = q[:pos] + rng.choice(["\n", "  ", " \n"]) + q[pos + 1 :]
        elif k == "pad":
            q = rng.choice([" ", "\n", "  "]) + q + rng.choice(["", " ", "\n"])
        elif k == "trim":
            # Models often drop the final punctuation or a leading article.
            q = q.rstrip(".,;:")
    return q


REPLACEMENTS = [
    "not", "always", "never", "only", "usually", "implicitly", "explicitly",
    "immediately", "twice", "optionally", "three", "seven", "mutable", "immutable",
    "integer", "string", "method", "module", "faster", "silently",
]


def fabricate(rng, q, content):
    """Reword `q` (a few words swapped or replaced) so that it does not match."""
    norm_content = normalize(content)
    for _ in range(20):
        words = q.split()
        if len(words) < 3:
            break
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 2)):
                i = rng.randrange(len(words))
                words[i] = rng.choice(REPLACEMENTS)
        else:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
            if rng.random() < 0.5:
                j = rng.randrange(len(words))
                words[j] = rng.choice(REPLACEMENTS)
        fab = " ".join(words)
        nf = normalize(fab)
        if nf and nf not in norm_content:
            if rng.random() < 0.4:
                fab = fab.lower()
            return fab
    return "The reference manual guarantees that this never happens on any platform."


def unknown_id(rng, ids):
    r = rng.random()
    if r < 0.4:
        # Several retrieved IDs merged into one string.
        a, b = rng.sample(ids, 2)
        sep = rng.choice([", ", ",", "; ", " and ", " ", " | "])
        return a + sep + b
    if r < 0.7:
        # A near miss of a retrieved ID (typo, wrong number).
        base = rng.choice(ids)
        m = re.search(r"\d+", base)
        if m:
            return base[: m.start()] + str(int(m.group()) + rng.randint(1, 9) * 1000) + base[m.end() :]
        return base + "x"
    if r < 0.85:
        return f"chunk_{rng.randint(0, 40)}"
    return str(rng.randint(1, 20))


CLAIM_LEADS = [
    "The reference states that",
    "According to the documentation,",
    "The manual explains that",
    "As documented,",
    "",
]


def claim_text(rng, quote, title):
    sent = WS_RUN.sub(" ", quote).strip()
    lead = rng.choice(CLAIM_LEADS)
    if lead:
        sent = sent[:1].lower() + sent[1:]
        text = f"{lead} {sent}"
    else:
        text = sent[:1].upper() + sent[1:]
    if title and rng.random() < 0.3:
        text = f"({title}) {text}"
    return text.rstrip(".,;:") + "."


# --------------------------------------------------------------------------


def make_request(rng, paragraphs, n_chunks, chunk_bytes):
    starts = rng.sample(range(len(paragraphs)), n_chunks)
    id_style = rng.randrange(3)
    crlf = rng.random() < 0.05
    chunks = []
    for pos, start in enumerate(starts):
        key, title, _ = paragraphs[start]
        content = make_chunk(rng, paragraphs, start, chunk_bytes)
        if crlf:
            content = content.replace("\n", "\r\n")
        chunk = {"chunk_id": chunk_id_for(key, start, id_style), "content": content}
        chunk.update(metadata(rng, key, title))
        chunk["score"] = round(0.95 - pos * 0.02 - rng.random() * 0.02, 4)
        chunks.append(chunk)
    ids = [c["chunk_id"] for c in chunks]
    title0 = chunks[0]["source_title"] or paragraphs[starts[0]][1]
    question = rng.choice(
        [
            f"What does the Python reference say about {title0.lower()}?",
            f"How does {title0.lower()} work in Python?",
            f"Explain {title0.lower()}.",
        ]
    )
    if rng.random() < 0.05:
        return {"question": question, "chunks": chunks, "answer": {"answerable": False, "claims": []}}
    claims = []
    for _ in range(rng.randint(1, 5)):
        citations = []
        first_quote = None
        for _ in range(rng.randint(1, 3)):
            # Models cite the top-ranked chunks more often.
            ci = min(int(rng.expovariate(1 / 5)), n_chunks - 1)
            content = chunks[ci]["content"]
            q = pick_quote(rng, content)
            if q is None:
                continue
            first_quote = first_quote or q
            r = rng.random()
            if r < 0.10:
                citations.append({"chunk_id": unknown_id(rng, ids), "quote": perturb(rng, q)})
            elif r < 0.20:
                citations.append({"chunk_id": ids[ci], "quote": fabricate(rng, q, content)})
            else:
                citations.append({"chunk_id": ids[ci], "quote": perturb(rng, q)})
        if citations and rng.random() < 0.02:
            citations.append(dict(rng.choice(citations)))
        claims.append(
            {"text": claim_text(rng, first_quote or "the sources are silent", title0), "citations": citations}
        )
    return {"question": question, "chunks": chunks, "answer": {"answerable": True, "claims": claims}}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--chunk-bytes", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=20260)
    ap.add_argument("--out", default="-", help="output file ('-' = stdout)")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    paragraphs = load_paragraphs(rng)
    if args.chunks > len(paragraphs):
        ap.error(f"--chunks must be at most {len(paragraphs)}")
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8", newline="\n")
    try:
        for _ in range(args.requests):
            req = make_request(rng, paragraphs, args.chunks, args.chunk_bytes)
            out.write(json.dumps(req, ensure_ascii=False))
            out.write("\n")
    finally:
        if out is not sys.stdout:
            out.close()


if __name__ == "__main__":
    main()
