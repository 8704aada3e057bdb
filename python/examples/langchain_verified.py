#!/usr/bin/env python3
"""LangChain with a verified-output step: ``ChatOpenAI(...)
.with_structured_output(GroundedAnswer)`` piped into groundcite, so the
chain's output is renderer contract v1 and no unverified claim leaves it.

    python python/examples/langchain_verified.py http://127.0.0.1:8787 API_KEY

runs it against ``groundcite serve``'s OpenAI-compatible endpoint (the
embedded model), offline; scripts/e2e-service does.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, ConfigDict

import groundcite
from groundcite import Contract

CHUNKS: list[dict[str, Any]] = [
    {"chunk_id": "returns#1",
     "content": "Unworn items can be returned within 30 days of delivery for a full refund.",
     "source_title": "Returns"},
    {"chunk_id": "shipping#1",
     "content": "Standard shipping takes 3 to 5 business days within the continental US.",
     "source_title": "Shipping"},
]


# The seed's answer model, chunk_id held to the retrieved IDs (what
# `groundcite.schema(target, chunks)` does for a raw request).
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


PROMPT = ChatPromptTemplate.from_messages([
    # The prompt tests/e2e/openai_sdk.py uses with the embedded 135M model.
    ("system", "Answer using ONLY the provided sources. Return JSON with answerable and claims; "
               "each claim has text and citations with chunk_id and an exact quote from that chunk."),
    ("user", "Sources:\n{sources}\n\nQuestion: {question}"),
])


def verified(inputs: dict[str, Any]) -> Contract:
    """The verified-output step: the structured answer against the chunks."""
    return groundcite.verify(inputs["answer"], inputs["chunks"], question=inputs["question"])


def prompt_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """Step 2 of the seed: sources under explicit chunk_id headers."""
    sources = "\n\n".join(f"[chunk_id: {c['chunk_id']}]\n{c['content']}" for c in inputs["chunks"])
    return {"question": inputs["question"], "sources": sources}


def build_chain(llm: ChatOpenAI) -> Any:
    answer = (
        RunnableLambda(prompt_inputs)
        | PROMPT
        | llm.with_structured_output(GroundedAnswer, method="json_schema", strict=True)
    )
    return RunnablePassthrough.assign(answer=answer) | RunnableLambda(verified)


def main() -> None:
    base, key = sys.argv[1].rstrip("/"), sys.argv[2]
    llm = ChatOpenAI(model="smollm2", base_url=f"{base}/v1", api_key=key,
                     temperature=0, max_retries=0, timeout=600)
    contract = build_chain(llm).invoke(
        {"question": "How long do I have to return an item?", "chunks": CHUNKS})
    assert isinstance(contract, Contract)
    assert contract.contract_version == "1"
    for claim in contract.claims:
        for c in claim.citations:
            content = next(x["content"] for x in CHUNKS if x["chunk_id"] == c.chunk_id)
            assert c.span is not None and content[c.span.start:c.span.end] == c.source_text
    print(f"langchain: answerable={contract.answerable} claims={len(contract.claims)} "
          f"answer={contract.answer!r}")


if __name__ == "__main__":
    main()
