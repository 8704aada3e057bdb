"""groundcite: every claim a user sees is linked to a chunk that was really
retrieved and to a quote that really is in that chunk, decided by
deterministic code (the Rust verifier, in process), not by the model.

    from groundcite import verify

    contract = verify(answer, chunks, question="How long is the refund window?")
    contract.answerable, contract.answer, contract.model_dump()

Key functions (each also takes ``output="dict"`` or ``output="json"``):

- :func:`verify`: a structured answer (``GroundedAnswer``, dict or JSON
  text) against the retrieved chunks: renderer contract v1.
- :func:`verify_many`: many requests in parallel, GIL released, in order.
- :func:`parse`: a free-form answer with citation markers.
- :func:`convert`: a provider-native response with citations.
- :func:`schema` and :func:`lint`: strict structured-output schemas.
- :func:`verify_answer_citations` and :func:`build_renderer_contract`:
  the seed's Steps 5 and 6, drop-in.

Errors: :class:`InputError` (a ``ValueError``, with the JSON path) and
:class:`CitationFormatError`, with the CLI's messages and codes.
"""

from ._api import (
    ClaimPolicy,
    Output,
    Profile,
    Provider,
    SchemaFragment,
    Target,
    convert,
    lint,
    parse,
    schema,
    verify,
    verify_many,
)
from ._native import __version__
from .answer import Chunk, Citation, Claim, GroundedAnswer
from .contract import (
    Contract,
    ContractCitation,
    ContractClaim,
    QuantityFinding,
    QuoteLocation,
    Refusal,
    Source,
    Span,
    TableHeader,
    Warning,
)
from .errors import CitationFormatError, GroundciteError, InputError, InputTypeError
from .seed import build_renderer_contract, verify_answer_citations

__all__ = [
    "__version__",
    "verify",
    "verify_many",
    "parse",
    "convert",
    "schema",
    "lint",
    "verify_answer_citations",
    "build_renderer_contract",
    "SchemaFragment",
    "Output",
    "Profile",
    "ClaimPolicy",
    "Provider",
    "Target",
    "GroundedAnswer",
    "Claim",
    "Citation",
    "Chunk",
    "Contract",
    "ContractClaim",
    "ContractCitation",
    "QuantityFinding",
    "QuoteLocation",
    "Refusal",
    "Source",
    "Span",
    "TableHeader",
    "Warning",
    "GroundciteError",
    "InputError",
    "InputTypeError",
    "CitationFormatError",
]
