"""groundcite's functions: verify, verify_many, parse, convert, schema, lint.

Every decision is the Rust verifier's (the extension module
``groundcite._native``); this module turns Python values into JSON text and
the contract's JSON into the output asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Optional, Union, overload

from . import _native
from ._inputs import JSONText, answer_text, chunks_text, dumps, optional_text, request_text
from .contract import Contract
from .errors import InputError, InputTypeError

__all__ = ["verify", "verify_many", "parse", "convert", "schema", "lint", "SchemaFragment"]

#: How a result comes back: a Pydantic ``Contract`` (default), the contract
#: as a ``dict`` (``json.loads`` of its JSON), or its JSON text (compact, the
#: bytes ``groundcite verify --batch`` writes).
Output = Literal["model", "dict", "json"]
Profile = Literal["default", "lenient"]
ClaimPolicy = Literal["strict", "lenient"]
Provider = Literal[
    "anthropic", "bedrock-rag", "bedrock-converse", "gemini", "cohere", "openai-responses"
]
Target = Literal["openai", "azure", "anthropic", "bedrock"]
Result = Union[Contract, dict[str, Any], str]


def _out(result: Union[str, dict[str, Any]], output: str) -> Any:
    """The native result (JSON text, or a dict when asked for one) in the
    form ``output`` names."""
    if output == "model":
        if isinstance(result, dict):
            return Contract.model_validate(result)
        return Contract.model_validate_json(result)
    return result


def _check_output(output: str) -> None:
    if output not in ("model", "dict", "json"):
        raise InputError(f"{output!r} is not one of 'model', 'dict', 'json'", "output")


def _name(value: Any, source: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"expected a str, got {type(value).__name__}", source)
    return value


@overload
def verify(
    answer: Any, chunks: Any, *, question: Optional[str] = ..., model: Optional[str] = ...,
    trace_id: Optional[str] = ..., profile: Profile = ..., claims: ClaimPolicy = ...,
    output: Literal["model"] = ...,
) -> Contract: ...
@overload
def verify(
    answer: Any, chunks: Any, *, question: Optional[str] = ..., model: Optional[str] = ...,
    trace_id: Optional[str] = ..., profile: Profile = ..., claims: ClaimPolicy = ...,
    output: Literal["dict"],
) -> dict[str, Any]: ...
@overload
def verify(
    answer: Any, chunks: Any, *, question: Optional[str] = ..., model: Optional[str] = ...,
    trace_id: Optional[str] = ..., profile: Profile = ..., claims: ClaimPolicy = ...,
    output: Literal["json"],
) -> str: ...
def verify(
    answer: Any,
    chunks: Any,
    *,
    question: Optional[str] = None,
    model: Optional[str] = None,
    trace_id: Optional[str] = None,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
    output: Output = "model",
) -> Result:
    """Verifies a model's structured answer against the retrieved chunks
    (``groundcite verify``) and returns renderer contract v1.

    ``answer``: a ``GroundedAnswer`` (the package's, or any Pydantic model
    of that shape), a dict, or JSON text. ``chunks``: a list of dicts or
    Pydantic models with ``chunk_id``, ``content`` and optionally
    ``source_title``, ``source_url``, ``page_number``, ``score``; or JSON
    text of that array. ``trace_id`` defaults to a fresh UUIDv7.

    Raises :class:`InputError` (a ``ValueError``) for bad input, with the
    argument, line, column and JSON path.
    """
    _check_output(output)
    text = _native.verify(
        answer_text(answer),
        chunks_text(chunks),
        question=optional_text(question, "question"),
        model=optional_text(model, "model"),
        trace_id=optional_text(trace_id, "trace_id"),
        profile=_name(profile, "profile"),
        claims=_name(claims, "claims"),
        dicts=output == "dict",
    )
    return _out(text, output)  # type: ignore[no-any-return]


@overload
def verify_many(
    requests: Iterable[Any], *, model: Optional[str] = ..., jobs: Optional[int] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["model"] = ...,
    errors: Literal["raise"] = ...,
) -> list[Contract]: ...
@overload
def verify_many(
    requests: Iterable[Any], *, model: Optional[str] = ..., jobs: Optional[int] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["dict"],
    errors: Literal["raise"] = ...,
) -> list[dict[str, Any]]: ...
@overload
def verify_many(
    requests: Iterable[Any], *, model: Optional[str] = ..., jobs: Optional[int] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["json"],
    errors: Literal["raise"] = ...,
) -> list[str]: ...
@overload
def verify_many(
    requests: Iterable[Any], *, model: Optional[str] = ..., jobs: Optional[int] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["model"] = ...,
    errors: Literal["return"],
) -> list[Union[Contract, InputError]]: ...
@overload
def verify_many(
    requests: Iterable[Any], *, model: Optional[str] = ..., jobs: Optional[int] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["dict"],
    errors: Literal["return"],
) -> list[Union[dict[str, Any], InputError]]: ...
@overload
def verify_many(
    requests: Iterable[Any], *, model: Optional[str] = ..., jobs: Optional[int] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["json"],
    errors: Literal["return"],
) -> list[Union[str, InputError]]: ...
def verify_many(
    requests: Iterable[Any],
    *,
    model: Optional[str] = None,
    jobs: Optional[int] = None,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
    output: Output = "model",
    errors: Literal["raise", "return"] = "raise",
) -> list[Any]:
    """Verifies many requests in parallel, with the GIL released, and
    returns one result per request, in input order (``groundcite verify
    --batch`` in memory).

    Each request is a line of a batch file: JSON text (``str`` or
    ``bytes``; the fastest), a dict, or a Pydantic model, holding
    ``{"question"?, "chunks", "answer", "trace_id"?, "model"?}``; the
    answer and chunks may be Pydantic models inside a dict. ``model`` names
    the model for requests that name none; ``jobs`` is the number of
    threads (default: one per core).

    ``errors="raise"`` (default): the first bad request raises its
    :class:`InputError`, whose ``line`` is the request's 1-based position.
    ``errors="return"``: bad requests come back as ``InputError`` objects
    in their place (``e.error_object()`` is the CLI's error line).
    """
    _check_output(output)
    if errors not in ("raise", "return"):
        raise InputError(f"{errors!r} is not one of 'raise', 'return'", "errors")
    if isinstance(requests, (str, bytes, Mapping)) or not isinstance(requests, Iterable):
        raise InputTypeError(
            f"expected an iterable of requests, got {type(requests).__name__}", "requests"
        )
    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 0):
        raise InputError(f"expected a non-negative int or None, got {jobs!r}", "jobs")
    texts: list[JSONText] = []
    failed: dict[int, InputError] = {}
    for i, request in enumerate(requests):
        t = request_text(request, i + 1)
        if isinstance(t, InputError):
            failed[i] = t
            texts.append("")
        else:
            texts.append(t)
    raw = _native.verify_many(
        texts,
        model=optional_text(model, "model"),
        jobs=jobs,
        profile=_name(profile, "profile"),
        claims=_name(claims, "claims"),
        dicts=output == "dict",
    )
    for i, e in failed.items():
        raw[i] = e
    if errors == "raise":
        for r in raw:
            if isinstance(r, InputError):
                raise r
    if output in ("json", "dict"):
        return raw
    validate = Contract.model_validate_json
    return [r if isinstance(r, (InputError, dict)) else validate(r) for r in raw]


@overload
def parse(
    text: Union[str, bytes], chunks: Any, *, question: Optional[str] = ...,
    model: Optional[str] = ..., trace_id: Optional[str] = ..., profile: Profile = ...,
    claims: ClaimPolicy = ..., output: Literal["model"] = ...,
) -> Contract: ...
@overload
def parse(
    text: Union[str, bytes], chunks: Any, *, question: Optional[str] = ...,
    model: Optional[str] = ..., trace_id: Optional[str] = ..., profile: Profile = ...,
    claims: ClaimPolicy = ..., output: Literal["dict"],
) -> dict[str, Any]: ...
@overload
def parse(
    text: Union[str, bytes], chunks: Any, *, question: Optional[str] = ...,
    model: Optional[str] = ..., trace_id: Optional[str] = ..., profile: Profile = ...,
    claims: ClaimPolicy = ..., output: Literal["json"],
) -> str: ...
def parse(
    text: Union[str, bytes],
    chunks: Any,
    *,
    question: Optional[str] = None,
    model: Optional[str] = None,
    trace_id: Optional[str] = None,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
    output: Output = "model",
) -> Result:
    """Verifies a free-form answer whose citations are written in the text
    (``[1]``, ``[^1]``, ``[doc1]``, ``(Source: title)``, a trailing
    "Sources" list) against the chunks in the order the model saw them
    (``groundcite parse``).

    Raises :class:`CitationFormatError` when no citation can be extracted
    from a non-empty answer, :class:`InputError` for bad input (an empty
    answer is bad input).
    """
    _check_output(output)
    if not isinstance(text, (str, bytes)):
        raise InputTypeError(f"expected the answer's text, got {type(text).__name__}", "text")
    out = _native.parse(
        text,
        chunks_text(chunks),
        question=optional_text(question, "question"),
        model=optional_text(model, "model"),
        trace_id=optional_text(trace_id, "trace_id"),
        profile=_name(profile, "profile"),
        claims=_name(claims, "claims"),
        dicts=output == "dict",
    )
    return _out(out, output)  # type: ignore[no-any-return]


@overload
def convert(
    provider: Provider, response: Any, chunks: Any, *, request: Any = ...,
    question: Optional[str] = ..., model: Optional[str] = ..., trace_id: Optional[str] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["model"] = ...,
) -> Contract: ...
@overload
def convert(
    provider: Provider, response: Any, chunks: Any, *, request: Any = ...,
    question: Optional[str] = ..., model: Optional[str] = ..., trace_id: Optional[str] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["dict"],
) -> dict[str, Any]: ...
@overload
def convert(
    provider: Provider, response: Any, chunks: Any, *, request: Any = ...,
    question: Optional[str] = ..., model: Optional[str] = ..., trace_id: Optional[str] = ...,
    profile: Profile = ..., claims: ClaimPolicy = ..., output: Literal["json"],
) -> str: ...
def convert(
    provider: Provider,
    response: Any,
    chunks: Any,
    *,
    request: Any = None,
    question: Optional[str] = None,
    model: Optional[str] = None,
    trace_id: Optional[str] = None,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
    output: Output = "model",
) -> Result:
    """Verifies a provider-native response with citations into contract v1
    (``groundcite convert --from PROVIDER``): Anthropic (a response, an SSE
    stream or its events), Bedrock RetrieveAndGenerate and Converse,
    Gemini, Cohere, OpenAI Responses. ``response`` and ``request`` (the
    request sent; anthropic and bedrock-converse) are dicts or JSON text.
    """
    _check_output(output)
    def as_text(value: Any, source: str) -> JSONText:
        if isinstance(value, (str, bytes)):
            return value
        return dumps(value, source)
    out = _native.convert(
        _name(provider, "provider"),
        as_text(response, "response"),
        chunks_text(chunks),
        request=None if request is None else as_text(request, "request"),
        question=optional_text(question, "question"),
        model=optional_text(model, "model"),
        trace_id=optional_text(trace_id, "trace_id"),
        profile=_name(profile, "profile"),
        claims=_name(claims, "claims"),
        dicts=output == "dict",
    )
    return _out(out, output)  # type: ignore[no-any-return]


class SchemaFragment(dict[str, Any]):
    """A provider request fragment (a dict to merge into the request) with
    ``notes``: what the caller should know about it, e.g. why ``chunk_id``
    stayed a free string."""

    notes: list[str]


def schema(target: Target, chunks: Any = None) -> SchemaFragment:
    """The strict structured-output request fragment for ``target``
    (``groundcite schema --target``): ``{"response_format": ...}`` for
    openai and azure, ``{"output_config": ...}`` for anthropic,
    ``{"outputConfig": ...}`` for bedrock. With ``chunks`` (as for
    ``verify``, or a list of chunk IDs as ``str``), ``chunk_id`` becomes an
    enum of their IDs where the provider's limits allow it."""
    if chunks is not None and isinstance(chunks, list) and chunks and all(isinstance(c, str) for c in chunks):
        value, notes = _native.schema(_name(target, "target"), chunk_ids=list(chunks))
    else:
        value, notes = _native.schema(
            _name(target, "target"), None if chunks is None else chunks_text(chunks)
        )
    fragment = SchemaFragment(json.loads(value))
    fragment.notes = notes
    return fragment


def lint(document: Any, target: Target) -> list[dict[str, str]]:
    """Every rule of ``target``'s strict subset that a JSON schema or a whole
    request fragment breaks (``groundcite schema lint``), as
    ``{"pointer", "rule", "message", "provider_error"}`` dicts; empty when
    the provider would accept it."""
    text = document if isinstance(document, (str, bytes)) else dumps(document, "schema")
    return json.loads(_native.lint(text, _name(target, "target")))  # type: ignore[no-any-return]
