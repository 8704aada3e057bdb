"""The seed's functions, drop-in: Steps 5 and 6 of the seed's how-to with
groundcite behind them.

    from groundcite import build_renderer_contract, verify_answer_citations

    verified_answer, warnings = verify_answer_citations(raw_answer, chunks)
    payload = build_renderer_contract(
        question=question,
        verified_answer=verified_answer,
        chunks=chunks,
        raw_answer=raw_answer,
        warnings=warnings,
    )

``verify_answer_citations`` keeps only the claims and citations the
verifier accepts, in an instance of the caller's own answer class (the
package's :class:`~groundcite.GroundedAnswer` when ``raw_answer`` is a dict
or JSON text); ``warnings`` are the contract's :class:`~groundcite.Warning`
objects. ``build_renderer_contract`` returns the renderer contract v1
payload as a dict. It verifies ``raw_answer`` again (deterministic, and
cheap next to the model call), so the payload is always the verifier's
own: a ``verified_answer`` or ``warnings`` that differ from what
verification gives raise :class:`~groundcite.InputError` instead of
reaching the user.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel

from ._api import ClaimPolicy, Profile, verify
from .answer import GroundedAnswer
from .contract import Contract, Warning
from .errors import InputError, InputTypeError

__all__ = ["verify_answer_citations", "build_renderer_contract"]


def _verified_fields(contract: Contract) -> dict[str, Any]:
    return {
        "answerable": contract.answerable,
        "claims": [
            {
                "text": claim.text,
                "citations": [
                    {"chunk_id": c.chunk_id, "quote": c.quote} for c in claim.citations
                ],
            }
            for claim in contract.claims
        ],
    }


def _verified_answer(raw_answer: Any, contract: Contract) -> Any:
    fields = _verified_fields(contract)
    if isinstance(raw_answer, BaseModel):
        # The caller's class (and its nested Claim/Citation classes), other
        # fields kept as they were.
        return type(raw_answer).model_validate({**raw_answer.model_dump(), **fields})
    return GroundedAnswer.model_validate(fields)


def _core(answer: Any) -> Any:
    """What the verifier reads of a caller's answer model: ``answerable``
    and ``claims`` (a team's class may carry fields of its own)."""
    if isinstance(answer, BaseModel):
        dumped = answer.model_dump(mode="json")
        return {k: dumped[k] for k in ("answerable", "claims") if k in dumped}
    return answer


def verify_answer_citations(
    raw_answer: Any,
    chunks: Any,
    *,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
) -> tuple[Any, list[Warning]]:
    """Drops every citation whose chunk was not retrieved or whose quote is
    not in that chunk, and every claim left without one; ``answerable``
    becomes False when nothing survives. Returns ``(verified_answer,
    warnings)``."""
    contract = verify(_core(raw_answer), chunks, profile=profile, claims=claims)
    return _verified_answer(raw_answer, contract), list(contract.warnings)


def _answer_shape(answer: Any) -> dict[str, Any]:
    """``answer``'s answerable flag, claim texts and citations."""
    d = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    try:
        return {
            "answerable": d["answerable"],
            "claims": [
                {
                    "text": c["text"],
                    "citations": [
                        {"chunk_id": x["chunk_id"], "quote": x["quote"]} for x in c["citations"]
                    ],
                }
                for c in d["claims"]
            ],
        }
    except (KeyError, TypeError):
        raise InputTypeError(
            "expected the answer verify_answer_citations returned, "
            f"got {type(answer).__name__} of another shape",
            "verified_answer",
        ) from None


def _warning_key(w: Any) -> tuple[Any, ...]:
    d = w.model_dump() if isinstance(w, BaseModel) else w
    if not isinstance(d, dict):
        raise InputTypeError(f"expected warning objects, got {type(w).__name__}", "warnings")
    return (d.get("code"), d.get("claim_index"), d.get("citation_index"), d.get("chunk_id"))


def build_renderer_contract(
    *,
    question: Optional[str],
    verified_answer: Any,
    chunks: Any,
    raw_answer: Any,
    warnings: Optional[list[Any]] = None,
    model: Optional[str] = None,
    trace_id: Optional[str] = None,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
) -> dict[str, Any]:
    """The renderer contract v1 payload (a dict) for the verified answer:
    claims with their footnotes, each cited chunk's metadata
    (``source_title``, ``source_url``, ``page_number``; None when missing,
    never a default link), the warnings, and R1/R2 refusals. ``trace_id``
    (default: a fresh UUIDv7) is the one to log the chunks, the raw answer
    and this payload under."""
    contract = verify(
        _core(raw_answer),
        chunks,
        question=question,
        model=model,
        trace_id=trace_id,
        profile=profile,
        claims=claims,
    )
    if _answer_shape(verified_answer) != _verified_fields(contract):
        raise InputError(
            "is not what verifying raw_answer against chunks gives; pass the answer "
            "verify_answer_citations returned for the same raw_answer and chunks",
            "verified_answer",
        )
    if warnings is not None and [_warning_key(w) for w in warnings] != [
        _warning_key(w) for w in contract.warnings
    ]:
        raise InputError(
            "are not the warnings verify_answer_citations returned for the same raw_answer and chunks",
            "warnings",
        )
    return contract.model_dump()
