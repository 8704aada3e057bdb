"""Python values to the JSON text the Rust verifier reads.

``str`` and ``bytes`` pass through untouched (they are JSON text already).
Mappings, sequences and Pydantic models (at any depth: a request dict
holding a ``GroundedAnswer``, a list of chunk models) are written with
``json.dumps``; lone surrogates become ``\\ud800`` escapes, which the
verifier refuses with the JSON path of the string that held them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Union

from pydantic import BaseModel

from .errors import InputError, InputTypeError

JSONText = Union[str, bytes]


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")


def dumps(value: Any, source: str) -> str:
    """``value`` as JSON text; failures are :class:`InputError` about ``source``."""
    try:
        return json.dumps(value, default=_default, allow_nan=False)
    except RecursionError:
        raise InputError("is nested too deeply to be JSON", source) from None
    except TypeError as e:
        raise InputTypeError(str(e), source) from None
    except ValueError as e:
        # Non-finite floats; a model's own serialization errors.
        raise InputError(str(e), source) from None


def answer_text(answer: Any, source: str = "answer") -> JSONText:
    """A GroundedAnswer (any Pydantic model of that shape), a mapping, or
    JSON text."""
    if isinstance(answer, (str, bytes)):
        return answer
    if isinstance(answer, (BaseModel, Mapping)):
        return dumps(answer, source)
    raise InputTypeError(
        f"expected a GroundedAnswer, a dict or JSON text, got {type(answer).__name__}", source
    )


def chunks_text(chunks: Any, source: str = "chunks") -> JSONText:
    """A sequence of chunks (dicts or Pydantic models), or JSON text of an array."""
    if isinstance(chunks, (str, bytes)):
        return chunks
    if isinstance(chunks, Sequence):
        return dumps(list(chunks), source)
    if isinstance(chunks, Mapping) or isinstance(chunks, BaseModel):
        raise InputTypeError(
            f"expected a list of chunks, got a single {type(chunks).__name__}", source
        )
    try:
        items = list(chunks)
    except TypeError:
        raise InputTypeError(
            f"expected a list of chunks or JSON text, got {type(chunks).__name__}", source
        ) from None
    return dumps(items, source)


def request_text(request: Any, position: int) -> Union[JSONText, InputError]:
    """One ``verify_many`` request (JSON text, a mapping or a Pydantic
    model) as JSON text, or the error for its position."""
    if isinstance(request, (str, bytes)):
        return request
    if isinstance(request, (Mapping, BaseModel)):
        try:
            return dumps(request, "requests")
        except InputError as e:
            e.line = position
            return e
    return InputTypeError(
        f"expected a request (a dict or JSON text), got {type(request).__name__}",
        "requests",
        line=position,
    )


def optional_text(value: Any, source: str) -> Any:
    """A ``str`` or ``None`` argument (question, model, trace_id)."""
    if value is None or isinstance(value, str):
        return value
    raise InputTypeError(f"expected a str or None, got {type(value).__name__}", source)
