#!/usr/bin/env python3
"""Baseline: the citation verifier a Python team would write.

Same rule and same output as `groundcite verify --batch`: reads JSONL
requests ({"question", "chunks", "answer"}) from a file (or stdin) and writes
one renderer-contract-v1 JSON document per line, in order.

The matching rule (groundcite's default profile):
  * str.casefold(), except that the ligatures U+FB00-U+FB06 and
    U+FB13-U+FB17 (which casefold() would expand, e.g. U+FB01 -> "fi") are
    kept as written;
  * curly quotes to straight: U+2018 U+2019 U+201A U+201B U+2032 -> ',
    U+201C U+201D U+201E U+201F U+2033 -> ";
  * every run of White_Space (exactly Rust's char::is_whitespace) -> one
    space, leading/trailing white space ignored;
  * the normalized quote must be a substring of the normalized chunk. The
    leftmost byte-for-byte occurrence wins (match "exact"); otherwise the
    leftmost normalized occurrence that starts and ends on whole original
    characters (match "normalized"), mapped back to code points of the
    original chunk through a per-character map.

Plain single-process Python, json module only. Warning messages are shorter
than groundcite's (no near-miss search); codes, verdicts and spans are the
same.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
import uuid

# Rust's char::is_whitespace: the Unicode White_Space property. (Python's
# str.isspace() also accepts U+001C..U+001F, so it is not used.)
WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
WS_SET = frozenset(WHITESPACE)
WS_RUN = re.compile("[" + WHITESPACE + "]+")
QUOTE_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
}
QUOTE_TABLE = str.maketrans(QUOTE_MAP)
# Characters that fold to themselves although casefold() would expand them.
KEEP = {chr(c): chr(c) for c in [*range(0xFB00, 0xFB07), *range(0xFB13, 0xFB18)]}
HAS_LIGATURE = re.compile("[\ufb00-\ufb06\ufb13-\ufb17]")

REFUSALS = {
    "R1": ("no_answer_in_sources", "I couldn't find the answer to that in the available documents."),
    "R2": (
        "citations_unverified",
        "I couldn't verify an answer against the available documents, so none is shown.",
    ),
}


def normalize(text: str) -> str:
    """The normalized form of `text` (no map)."""
    if HAS_LIGATURE.search(text):
        return normalize_with_map(text)[0]
    return WS_RUN.sub(" ", text.translate(QUOTE_TABLE).casefold()).strip(WHITESPACE)


# Per-character folding, cached: a character's folded form never depends on
# its neighbours, and no character folds to white space or to a quote mark.
_FOLD: dict[str, str] = dict(KEEP)


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """Normalized `text` and, for each of its characters, the index of the
    original character it came from (a collapsed space points at the first
    white-space character of its run)."""
    out: list[str] = []
    origin: list[int] = []
    out_append = out.append
    origin_append = origin.append
    fold = _FOLD
    ws = WS_SET
    pending = -1  # index where the current white-space run began
    for i, c in enumerate(text):
        if c in ws:
            if pending < 0:
                pending = i
            continue
        f = fold.get(c)
        if f is None:
            f = fold[c] = QUOTE_MAP.get(c) or c.casefold()
        if pending >= 0:
            if out:
                out_append(" ")
                origin_append(pending)
            pending = -1
        if len(f) == 1:
            out_append(f)
            origin_append(i)
        else:  # e.g. "ß" -> "ss": every folded character maps to the same original
            for g in f:
                out_append(g)
                origin_append(i)
    return "".join(out), origin


class Chunk:
    """A retrieved chunk; its normalized form is built on first need."""

    __slots__ = ("data", "content", "_norm", "_origin")

    def __init__(self, data: dict):
        self.data = data
        self.content = data["content"]
        self._norm = None
        self._origin = None

    def find(self, quote: str, q_norm: str):
        """(kind, start, end) in code points of the original, or None."""
        content = self.content
        at = content.find(quote)
        if at >= 0:
            return "exact", at, at + len(quote)
        if self._norm is None:
            self._norm, self._origin = normalize_with_map(content)
        norm, origin = self._norm, self._origin
        n = len(norm)
        at = norm.find(q_norm)
        while at >= 0:
            end = at + len(q_norm)
            # Accept only matches covering whole original characters.
            if (at == 0 or origin[at] != origin[at - 1]) and (end == n or origin[end] != origin[end - 1]):
                return "normalized", origin[at], origin[end - 1] + 1
            at = norm.find(q_norm, at + 1)
        return None


def merged_ids(cid: str, by_id: dict) -> list[str] | None:
    parts = []
    for p in re.split(r"[,;|\n]", cid):
        for q in p.split(" and "):
            for r in WS_RUN.split(q):
                r = r.strip("[]\"'")
                if r:
                    parts.append(r)
    known = sum(1 for p in parts if p in by_id)
    return parts if len(parts) >= 2 and known >= 1 else None


def url_problem(url: str) -> str | None:
    if any(c in WS_SET or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in url):
        return "contains white space or control characters"
    lower = "".join(c.lower() if c.isascii() else c for c in url)  # ASCII-only lowering, as Rust
    if lower.startswith("https://"):
        rest = lower[8:]
    elif lower.startswith("http://"):
        rest = lower[7:]
    else:
        return "is not an http(s) URL"
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if not authority:
        return "has no host"
    if "@" in authority:
        return "carries credentials"
    return None


def warning(code, claim_index, citation_index, chunk_id, message):
    return {
        "code": code,
        "claim_index": claim_index,
        "citation_index": citation_index,
        "chunk_id": chunk_id,
        "message": message,
    }


def verify(request: dict) -> dict:
    chunks_in = request["chunks"]
    chunks = [Chunk(c) for c in chunks_in]
    by_id = {}
    for i, c in enumerate(chunks_in):
        if c["chunk_id"] in by_id:
            raise ValueError(f"duplicate chunk_id {c['chunk_id']!r}")
        by_id[c["chunk_id"]] = i
    answer = request["answer"]
    answerable = answer["answerable"]
    claims_in = answer["claims"]

    warnings = []
    kept_claims = []
    refs = {}  # chunk position -> footnote number
    ref_order = []
    kept_texts = {}  # normalized text of a kept claim -> its index

    if not answerable:
        if claims_in:
            warnings.append(
                warning(
                    "claims_on_unanswerable", None, None, None,
                    f"The model said the sources do not answer the question but sent {len(claims_in)} claim(s).",
                )
            )
    else:
        for index, claim in enumerate(claims_in):
            text = claim["text"].strip(WHITESPACE)
            cits = claim["citations"]
            if not text:
                warnings.append(warning("empty_claim_text", index, None, None, f"Claim {index} has no text."))
                continue
            norm_text = normalize(text)
            if norm_text in kept_texts:
                warnings.append(
                    warning("duplicate_claim", index, None, None, f"Claim {index} repeats claim {kept_texts[norm_text]}.")
                )
                continue
            if not cits:
                warnings.append(
                    warning("claim_without_citations", index, None, None, f"Claim {index} has no citations.")
                )
                continue
            claim_warnings = []
            kept = []  # (position, citation dict)
            for ci, cit in enumerate(cits):
                cid = cit["chunk_id"]
                quote = cit["quote"]
                pos = by_id.get(cid)
                if pos is None:
                    if merged_ids(cid, by_id):
                        claim_warnings.append(
                            warning("merged_chunk_ids", index, ci, cid, f"Citation {ci} joins several chunk IDs.")
                        )
                    else:
                        claim_warnings.append(
                            warning("unknown_chunk_id", index, ci, cid, f"Citation {ci} names an unknown chunk.")
                        )
                    continue
                q_norm = normalize(quote)
                if not any(ch.isalnum() for ch in q_norm):
                    claim_warnings.append(warning("empty_quote", index, ci, cid, f"Citation {ci} has an empty quote."))
                    continue
                chunk = chunks[pos]
                found = chunk.find(quote, q_norm)
                if found is None:
                    claim_warnings.append(
                        warning("quote_not_found", index, ci, cid, f"Citation {ci}: the quote is not in the chunk.")
                    )
                    continue
                kind, start, end = found
                if any(p == pos and c["span"]["start"] == start and c["span"]["end"] == end for p, c in kept):
                    claim_warnings.append(
                        warning("duplicate_citation", index, ci, cid, f"Citation {ci} repeats an earlier citation.")
                    )
                    continue
                kept.append(
                    (
                        pos,
                        {
                            "ref": 0,
                            "chunk_id": cid,
                            "quote": quote,
                            "source_text": chunk.content[start:end],
                            "match": kind,
                            "span": {"start": start, "end": end},
                        },
                    )
                )
            if not kept:
                claim_warnings.append(
                    warning(
                        "claim_unsupported", index, None, None,
                        f"Claim {index} was dropped: none of its {len(cits)} citation(s) verified.",
                    )
                )
                warnings.extend(claim_warnings)
                continue
            for pos, c in kept:
                ref = refs.get(pos)
                if ref is None:
                    ref_order.append(pos)
                    ref = refs[pos] = len(ref_order)
                c["ref"] = ref
            warnings.extend(claim_warnings)
            kept_claims.append({"index": index, "text": text, "citations": [c for _, c in kept]})
            kept_texts[norm_text] = index

    refusal = "R1" if not answerable else ("R2" if not kept_claims else None)
    contract = {
        "contract_version": "1",
        "trace_id": str(uuid.uuid4()),
        "question": request.get("question"),
        "answerable": refusal is None,
        "answer": None,
        "refusal": None,
        "claims": [],
        "sources": [],
        "warnings": warnings,
        "match_profile": "default",
        "model": None,
        "created_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    if refusal is not None:
        reason, message = REFUSALS[refusal]
        contract["answer"] = message
        contract["refusal"] = {"code": refusal, "reason": reason, "message": message}
        return contract

    sources = []
    for n, pos in enumerate(ref_order, 1):
        c = chunks_in[pos]
        url = c.get("source_url")
        if url is not None:
            why = url_problem(url)
            if why is not None:
                warnings.append(
                    warning("unsafe_source_url", None, None, c["chunk_id"], f"The source URL {why}.")
                )
                url = None
        sources.append(
            {
                "ref": n,
                "chunk_id": c["chunk_id"],
                "source_title": c.get("source_title"),
                "source_url": url,
                "page_number": c.get("page_number"),
                "score": c.get("score"),
            }
        )
    parts = []
    for claim in kept_claims:
        markers = []
        for cit in claim["citations"]:
            if cit["ref"] not in markers:
                markers.append(cit["ref"])
        parts.append(claim["text"] + " " + "".join(f"[{r}]" for r in markers))
    contract["answer"] = " ".join(parts)
    contract["claims"] = kept_claims
    contract["sources"] = sources
    return contract


def main(argv: list[str]) -> int:
    src = open(argv[1], encoding="utf-8") if len(argv) > 1 and argv[1] != "-" else sys.stdin
    out = sys.stdout
    with src:
        for line in src:
            if not line.strip():
                continue
            out.write(json.dumps(verify(json.loads(line)), ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
