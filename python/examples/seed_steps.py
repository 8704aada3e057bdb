#!/usr/bin/env python3
"""The seed's Steps 1-6 with groundcite behind them, offline.

The seed's code runs unchanged apart from two lines: the client's
``base_url`` points at ``groundcite serve`` (its OpenAI-compatible endpoint,
the embedded model decoding under the strict schema) instead of Azure
OpenAI, and Steps 5-6 import from ``groundcite`` instead of the seed's
snippet module.

    groundcite serve --addr 127.0.0.1:8787 &      # with an API key file
    python python/examples/seed_steps.py http://127.0.0.1:8787 API_KEY

scripts/e2e-service runs it against a throwaway service.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

from openai import OpenAI
from pydantic import BaseModel, ConfigDict

# Steps 5-6: the one changed import (was: from snippets.answer_with_citations import ...).
from groundcite import build_renderer_contract, verify_answer_citations


# Step 1. The seed's Pydantic schema. As the seed's "Known issues" advise
# for a model that invents IDs, chunk_id is restricted to the retrieved IDs
# (a 135M model otherwise wanders inside a free-form ID string).
class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: Literal["returns#1", "shipping#1"]
    quote: str


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    citations: list[Citation]


class GroundedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answerable: bool
    claims: list[Claim]


chunks: list[dict[str, Any]] = [
    {"chunk_id": "returns#1",
     "content": "Unworn items can be returned within 30 days of delivery for a full refund.",
     "source_title": "Returns", "source_url": "https://help.example.com/returns", "page_number": None},
    {"chunk_id": "shipping#1",
     "content": "Standard shipping takes 3 to 5 business days within the continental US.",
     "source_title": "Shipping", "source_url": None, "page_number": 2},
]


# Step 2. Sources with explicit IDs.
def format_sources(chunks: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[chunk_id: {c['chunk_id']}]\n{c['content']}" for c in chunks)


# Step 3. The attribution and no-answer prompt. The seed's longer prompt
# sends SmolLM2-135M (the embedded model) into a quote that runs to the
# token limit; a hosted model takes the seed's prompt as written. This is
# the prompt tests/e2e/openai_sdk.py uses with the same model.
SYSTEM_PROMPT = ("Answer using ONLY the provided sources. Return JSON with answerable and claims; "
                 "each claim has text and citations with chunk_id and an exact quote from that chunk.")


def main() -> None:
    base, key = sys.argv[1].rstrip("/"), sys.argv[2]
    # The changed line: groundcite serve instead of Azure OpenAI.
    client = OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=600)
    question = "How long do I have to return an item?"

    # Step 4. Structured outputs, as the seed calls them.
    completion = client.beta.chat.completions.parse(
        model="smollm2",
        messages=[
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Sources:\n{format_sources(chunks)}\n\nQuestion: {question}"},
        ],
        response_format=GroundedAnswer,
    )
    raw_answer = completion.choices[0].message.parsed
    assert isinstance(raw_answer, GroundedAnswer), raw_answer

    # Step 5. Validate cited chunk IDs and quote spans in code.
    verified_answer, warnings = verify_answer_citations(raw_answer, chunks)
    assert isinstance(verified_answer, GroundedAnswer)

    # Step 6. Map verified claims to the renderer contract.
    payload = build_renderer_contract(
        question=question,
        verified_answer=verified_answer,
        chunks=chunks,
        raw_answer=raw_answer,
        warnings=warnings,
    )
    assert payload["contract_version"] == "1"
    assert payload["answerable"] == verified_answer.answerable
    assert len(payload["claims"]) == len(verified_answer.claims)
    for claim in payload["claims"]:
        for c in claim["citations"]:
            chunk = next(x for x in chunks if x["chunk_id"] == c["chunk_id"])
            content = str(chunk["content"])
            # Every quote shown is really in its chunk, at the span given.
            assert content[c["span"]["start"]:c["span"]["end"]] == c["source_text"]
    print(json.dumps({"answerable": payload["answerable"], "answer": payload["answer"],
                      "warnings": [w["code"] for w in payload["warnings"]]}))


if __name__ == "__main__":
    main()
