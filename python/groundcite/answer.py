"""The seed's Pydantic models of the model's answer (``GroundedAnswer``,
``Claim``, ``Citation``, Step 1 of the seed) and of a retrieved ``Chunk``.

``GroundedAnswer`` can be passed to ``client.beta.chat.completions.parse
(response_format=GroundedAnswer)`` or LangChain's
``with_structured_output(GroundedAnswer)``: every object has
``additionalProperties: false`` and every field required.
"""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, ConfigDict

__all__ = ["Citation", "Claim", "GroundedAnswer", "Chunk"]


class Citation(BaseModel):
    """A citation: a retrieved chunk's ID and a verbatim quote from it."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    quote: str


class Claim(BaseModel):
    """A claim as the user reads it, with the citations that support it."""

    model_config = ConfigDict(extra="forbid")

    text: str
    citations: list[Citation]


class GroundedAnswer(BaseModel):
    """The model's structured answer."""

    model_config = ConfigDict(extra="forbid")

    answerable: bool
    claims: list[Claim]


class Chunk(BaseModel):
    """A retrieved chunk. Other fields (a retriever's own metadata) are
    kept on the model and ignored by verification."""

    model_config = ConfigDict(extra="allow")

    chunk_id: str
    content: str
    source_title: Optional[str] = None
    source_url: Optional[str] = None
    page_number: Optional[int] = None
    score: Optional[float] = None
