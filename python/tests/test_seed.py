"""The seed's Steps 5 and 6, drop-in: the seed's own Pydantic classes,
dicts, and the seed's hallucination rejection test (section 6)."""

from __future__ import annotations

from typing import Any, Optional

import pytest
from pydantic import BaseModel, ConfigDict

from groundcite import (
    Contract,
    GroundedAnswer,
    InputError,
    Warning,
    build_renderer_contract,
    verify_answer_citations,
)


# Step 1 of the seed, as a team has it in its own code.
class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: str
    quote: str


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    citations: list[Citation]


class TeamAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answerable: bool
    claims: list[Claim]


class AnnotatedAnswer(TeamAnswer):
    """A team's class with a field of its own."""
    model_config = ConfigDict(extra="forbid")
    confidence: Optional[float] = None


CHUNKS: list[dict[str, Any]] = [
    {"chunk_id": "refunds#1", "content": "Refunds are available within 30 days of purchase.",
     "source_title": "Refund policy", "source_url": "https://help.example.com/refunds", "page_number": None},
    {"chunk_id": "shipping#2", "content": "Standard shipping takes 3 to 7 business days.",
     "source_title": "Shipping", "source_url": None, "page_number": 4},
]


def raw(cls: type[TeamAnswer] = TeamAnswer, **extra: Any) -> TeamAnswer:
    return cls.model_validate({
        "answerable": True,
        "claims": [
            {"text": "Refunds are possible for 30 days.", "citations": [
                {"chunk_id": "refunds#1", "quote": "refunds are available within 30 days"},
                {"chunk_id": "refunds#9", "quote": "invented"}]},
            {"text": "Shipping takes 3 to 7 business days.", "citations": [
                {"chunk_id": "shipping#2", "quote": "Standard shipping takes 3 to 7 business days."}]},
            {"text": "Express shipping is free.", "citations": [
                {"chunk_id": "shipping#2", "quote": "Express shipping is free"}]},
        ],
        **extra,
    })


def test_steps_5_and_6_with_the_teams_own_classes() -> None:
    raw_answer = raw()
    verified_answer, warnings = verify_answer_citations(raw_answer, CHUNKS)
    assert type(verified_answer) is TeamAnswer
    assert isinstance(verified_answer.claims[0], Claim)
    assert verified_answer.answerable is True
    assert [c.text for c in verified_answer.claims] == [
        "Refunds are possible for 30 days.", "Shipping takes 3 to 7 business days."]
    assert [[x.chunk_id for x in c.citations] for c in verified_answer.claims] == [
        ["refunds#1"], ["shipping#2"]]
    assert all(isinstance(w, Warning) for w in warnings)
    assert [w.code for w in warnings] == ["unknown_chunk_id", "quote_not_found", "claim_unsupported"]

    payload = build_renderer_contract(
        question="How do refunds and shipping work?",
        verified_answer=verified_answer,
        chunks=CHUNKS,
        raw_answer=raw_answer,
        warnings=warnings,
    )
    assert isinstance(payload, dict)
    contract = Contract.model_validate(payload)
    assert contract.model_dump() == payload
    assert payload["question"] == "How do refunds and shipping work?"
    assert payload["answer"] == (
        "Refunds are possible for 30 days. [1] Shipping takes 3 to 7 business days. [2]")
    # Missing metadata is null, never a default link.
    assert [(s["source_url"], s["page_number"]) for s in payload["sources"]] == [
        ("https://help.example.com/refunds", None), (None, 4)]


def test_other_fields_of_the_callers_class_are_kept() -> None:
    verified_answer, _ = verify_answer_citations(raw(AnnotatedAnswer, confidence=0.8), CHUNKS)
    assert type(verified_answer) is AnnotatedAnswer
    assert verified_answer.confidence == 0.8


def test_dicts_get_the_packages_grounded_answer() -> None:
    verified_answer, warnings = verify_answer_citations(raw().model_dump(), CHUNKS)
    assert type(verified_answer) is GroundedAnswer
    assert len(verified_answer.claims) == 2 and len(warnings) == 3


def test_hallucination_rejection() -> None:
    """The seed's section 6: a mock answer citing a chunk that does not
    exist with a fabricated quote is stripped, flagged, and unanswerable."""
    mock = TeamAnswer.model_validate({"answerable": True, "claims": [
        {"text": "The warranty lasts ten years.",
         "citations": [{"chunk_id": "MOCK-404", "quote": "warranty of ten years"}]}]})
    verified_answer, warnings = verify_answer_citations(mock, CHUNKS)
    assert verified_answer.answerable is False and verified_answer.claims == []
    assert {w.code for w in warnings} == {"unknown_chunk_id", "claim_unsupported"}
    payload = build_renderer_contract(question="Warranty?", verified_answer=verified_answer,
                                      chunks=CHUNKS, raw_answer=mock, warnings=warnings)
    assert payload["refusal"]["code"] == "R2" and payload["claims"] == []


def test_a_tampered_verified_answer_never_reaches_the_payload() -> None:
    raw_answer = raw()
    verified_answer, warnings = verify_answer_citations(raw_answer, CHUNKS)
    tampered = verified_answer.model_copy(deep=True)
    tampered.claims[0].text = "Refunds are possible for 90 days."
    with pytest.raises(InputError) as e:
        build_renderer_contract(question=None, verified_answer=tampered, chunks=CHUNKS,
                                raw_answer=raw_answer, warnings=warnings)
    assert e.value.source == "verified_answer"
    with pytest.raises(InputError) as e:
        build_renderer_contract(question=None, verified_answer=verified_answer, chunks=CHUNKS,
                                raw_answer=raw_answer, warnings=warnings[:1])
    assert e.value.source == "warnings"
    with pytest.raises(InputError):
        build_renderer_contract(question=None, verified_answer=42, chunks=CHUNKS,
                                raw_answer=raw_answer, warnings=warnings)
