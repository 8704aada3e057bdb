#!/usr/bin/env python3
"""The seed's own client code, run offline against `groundcite serve`.

Uses the official `openai` SDK exactly as the seed does
(`client.beta.chat.completions.parse(response_format=GroundedAnswer)`) with
`base_url` pointed at groundcite's OpenAI-compatible endpoint, which the
embedded model serves with decoding held to the schema. Then streams the
same request, and sends the parsed answer to groundcite's `/v1/verify`.

    .venv/bin/python tests/e2e/openai_sdk.py http://127.0.0.1:8787 API_KEY

Exit 0 when every check passes; an assertion error otherwise.
"""

import json
import sys
import urllib.request
from typing import List, Literal

from openai import LengthFinishReasonError, OpenAI
from pydantic import BaseModel


# The seed's models (000, step 4), with `chunk_id` restricted to the
# retrieved IDs as the seed recommends (`groundcite schema --chunk-ids-from`
# does the same): a 135M model otherwise loops inside a free-form ID string
# until the token limit.
class Citation(BaseModel):
    chunk_id: Literal["returns#1", "shipping#1"]
    quote: str


class Claim(BaseModel):
    text: str
    citations: List[Citation]


class GroundedAnswer(BaseModel):
    answerable: bool
    claims: List[Claim]


CHUNKS = [
    {"chunk_id": "returns#1", "content": "Unworn items can be returned within 30 days of delivery for a full refund.",
     "source_title": "Returns", "source_url": None, "page_number": None},
    {"chunk_id": "shipping#1", "content": "Standard shipping takes 3 to 5 business days within the continental US.",
     "source_title": "Shipping", "source_url": None, "page_number": None},
]
SYSTEM = ("Answer using ONLY the provided sources. Return JSON with answerable and claims; "
          "each claim has text and citations with chunk_id and an exact quote from that chunk.")


def user_message(question: str) -> str:
    sources = "\n\n".join(f"[chunk_id: {c['chunk_id']}]\n{c['content']}" for c in CHUNKS)
    return f"Sources:\n{sources}\n\nQuestion: {question}"


def main() -> None:
    base, key = sys.argv[1].rstrip("/"), sys.argv[2]
    client = OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=120)
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_message("How long do I have to return an item?")},
    ]

    completion = client.beta.chat.completions.parse(
        model="smollm2", messages=messages, response_format=GroundedAnswer,
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "stop", choice.finish_reason
    parsed = choice.message.parsed
    assert isinstance(parsed, GroundedAnswer), type(parsed)
    assert completion.usage is not None and completion.usage.completion_tokens > 0
    print(f"parse(): answerable={parsed.answerable} claims={len(parsed.claims)} model={completion.model}")

    # Streamed through the SDK's structured-output stream helper: the same
    # strict schema, deltas as they are decoded, parsed at the end.
    deltas = 0
    with client.beta.chat.completions.stream(
        model="smollm2", messages=messages, response_format=GroundedAnswer,
    ) as stream:
        for event in stream:
            if event.type == "content.delta":
                deltas += 1
        final = stream.get_final_completion()
    assert final.choices[0].finish_reason == "stop", final.choices[0].finish_reason
    streamed = final.choices[0].message.parsed
    assert isinstance(streamed, GroundedAnswer), type(streamed)
    assert deltas > 1, deltas
    assert streamed == parsed, "greedy decoding: the stream gives the same answer"
    print(f"stream(): {deltas} deltas, same answer")

    # A limit too small for the answer: the schema grammar alone does not
    # bound the output, so the decoder closes the JSON before the limit and
    # reports the cut (finish_reason "length"); the SDK raises on it, and
    # the content it carries is still valid JSON, never a loop to the limit.
    try:
        client.beta.chat.completions.parse(
            model="smollm2", messages=messages, response_format=GroundedAnswer, max_tokens=60,
        )
        raise AssertionError("a 60-token limit did not cut the answer")
    except LengthFinishReasonError as e:
        cut = e.completion.choices[0]
        assert cut.finish_reason == "length", cut.finish_reason
        closed = json.loads(cut.message.content)
        assert "claims" in closed, closed
        print(f"max_tokens=60: finish_reason=length, closed JSON of {len(cut.message.content)} bytes")

    # groundcite's verifier decides what reaches a user.
    body = json.dumps({"chunks": CHUNKS, "answer": parsed.model_dump(), "question": "returns?"}).encode()
    req = urllib.request.Request(f"{base}/v1/verify", data=body, method="POST", headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        contract = json.load(r)
    assert contract["contract_version"] == "1", contract
    print(f"verify: answerable={contract['answerable']} kept={len(contract['claims'])} "
          f"warnings={[w['code'] for w in contract['warnings']]}")


if __name__ == "__main__":
    main()
