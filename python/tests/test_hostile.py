"""Hostile input: wrong types, lone surrogates, deep nesting, huge strings,
invalid UTF-8. Each is a clear exception (an InputError, a ValueError) or
a contract; none may crash the interpreter."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from groundcite import (
    CitationFormatError,
    InputError,
    InputTypeError,
    convert,
    lint,
    parse,
    schema,
    verify,
    verify_many,
)

CHUNKS = [{"chunk_id": "c1", "content": "Refunds are available within 30 days of purchase."}]
ANSWER = {
    "answerable": True,
    "claims": [{"text": "Refunds within 30 days.",
                "citations": [{"chunk_id": "c1", "quote": "within 30 days"}]}],
}


@pytest.mark.parametrize("answer", [None, 42, 3.5, object(), {1, 2}, ["a"], True])
def test_wrong_answer_types(answer: Any) -> None:
    with pytest.raises(InputError) as e:
        verify(answer, CHUNKS)
    assert e.value.source == "answer"


@pytest.mark.parametrize("chunks", [None, 42, {"chunk_id": "c1", "content": "x"}, object()])
def test_wrong_chunk_types(chunks: Any) -> None:
    with pytest.raises(InputTypeError) as e:
        verify(ANSWER, chunks)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)
    assert e.value.source == "chunks"


@pytest.mark.parametrize(
    "answer, path",
    [
        ({"answerable": "yes", "claims": []}, "answerable"),
        ({"answerable": True, "claims": [{"text": "x", "citations": [{"chunk_id": 7, "quote": "q"}]}]},
         "claims[0].citations[0].chunk_id"),
        ({"answerable": True, "claims": [], "extra": 1}, "extra"),
        ({"claims": []}, None),
    ],
)
def test_wrong_field_types_name_the_path(answer: Any, path: Any) -> None:
    with pytest.raises(InputError) as e:
        verify(answer, CHUNKS)
    assert e.value.path == path, str(e.value)


def test_values_json_cannot_carry() -> None:
    with pytest.raises(InputTypeError):
        verify({"answerable": True, "claims": [{"text": b"bytes", "citations": []}]}, CHUNKS)
    with pytest.raises(InputError):
        verify(ANSWER, [{"chunk_id": "c1", "content": "x", "score": float("nan")}])
    with pytest.raises(InputError):
        verify(ANSWER, [{"chunk_id": "c1", "content": "x", "page_number": -1}])
    with pytest.raises(InputError):
        verify(ANSWER, [{"chunk_id": "c1", "content": "x", "page_number": 2**70}])


def test_lone_surrogates() -> None:
    lone = "Refunds \ud800 within 30 days"
    # In a dict: escaped by json.dumps, refused with the path of the string.
    with pytest.raises(InputError) as e:
        verify(ANSWER, [{"chunk_id": "c1", "content": lone}])
    assert e.value.path == "[0].content"
    # In JSON text: not valid Unicode.
    with pytest.raises(InputError) as e:
        verify(json.dumps(ANSWER, ensure_ascii=False).replace("30 days.", "\udfff"), CHUNKS)
    assert e.value.source == "answer"
    options: list[dict[str, Any]] = [{"question": "q\ud800"}, {"model": "\udc00"}, {"trace_id": "\ud800"}]
    for kwargs in options:
        with pytest.raises(InputError):
            verify(ANSWER, CHUNKS, **kwargs)
    with pytest.raises(InputError):
        parse("Refunds \ud800 [1]", CHUNKS)
    out = verify_many(["\ud800", json.dumps({"chunks": CHUNKS, "answer": ANSWER})], errors="return")
    assert isinstance(out[0], InputError) and out[0].line == 1
    assert not isinstance(out[1], InputError)


def test_invalid_utf8_bytes() -> None:
    with pytest.raises(InputError) as e:
        verify(b'{"answerable": true, "claims": [\xff]}', CHUNKS)
    assert "UTF-8" in e.value.message
    out = verify_many([b"\xfe\xff"], errors="return")
    assert isinstance(out[0], InputError)


@pytest.mark.parametrize("depth", [200, 100_000])
def test_deeply_nested_json_text(depth: int) -> None:
    deep = "[" * depth + "]" * depth
    with pytest.raises(InputError) as e:
        verify(deep, CHUNKS)
    assert e.value.source == "answer"
    with pytest.raises(InputError):
        verify(ANSWER, deep)
    with pytest.raises(InputError):
        verify_many([deep])
    with pytest.raises(InputError):
        convert("cohere", deep, CHUNKS)
    with pytest.raises(InputError):
        lint(deep, "openai")


def test_deeply_nested_python_values() -> None:
    nested: Any = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(InputError):
        verify({"answerable": True, "claims": nested}, CHUNKS)
    with pytest.raises(InputError):
        verify_many([{"chunks": nested}])
    cyclic: dict[str, Any] = {"answerable": True}
    cyclic["claims"] = [cyclic]
    with pytest.raises(InputError):
        verify(cyclic, CHUNKS)


def test_huge_strings() -> None:
    content = ("All work and no play. " * 2_000_000) + "Refunds are available within 30 days."
    chunks = [{"chunk_id": "big", "content": content}]
    answer = {"answerable": True, "claims": [
        {"text": "Refunds within 30 days.", "citations": [{"chunk_id": "big", "quote": "refunds are available within 30 days"}]},
        {"text": "A long quote.", "citations": [{"chunk_id": "big", "quote": "no play " * 500_000 + "x"}]},
    ]}
    c = verify(answer, chunks)
    assert len(c.claims) == 1
    assert c.claims[0].citations[0].span is not None
    with pytest.raises(InputError):
        verify(ANSWER, [{"chunk_id": "x" * 100_000, "content": "y"}])
    with pytest.raises(InputError):
        verify(ANSWER, CHUNKS, trace_id="t" * 10_000)


def test_odd_options() -> None:
    with pytest.raises(InputError):
        verify_many([], jobs=-1)
    with pytest.raises(InputError):
        verify_many("not a list")
    with pytest.raises(InputError):
        verify_many({"chunks": [], "answer": ANSWER})
    with pytest.raises(InputError):
        verify_many([], errors="ignore")  # type: ignore[call-overload]
    with pytest.raises(InputError):
        verify(ANSWER, CHUNKS, profile=None)  # type: ignore[call-overload]
    with pytest.raises(InputError):
        schema("openai", [{"chunk_id": " padded ", "content": "x"}])
    with pytest.raises(InputError):
        convert("anthropic", "", CHUNKS)
    with pytest.raises(InputError):
        convert("gemini", "{}", CHUNKS, request="{}")
    assert verify_many([], jobs=0) == []


def test_exceptions_pickle_and_keep_their_fields() -> None:
    with pytest.raises(InputError) as e:
        verify('{"answerable": 1}', CHUNKS)
    back = pickle.loads(pickle.dumps(e.value))
    assert (back.message, back.source, back.path, back.line, back.column) == (
        e.value.message, e.value.source, e.value.path, e.value.line, e.value.column)
    assert str(back) == str(e.value)
    with pytest.raises(CitationFormatError) as f:
        parse("Nothing cited here.", CHUNKS)
    again = pickle.loads(pickle.dumps(f.value))
    assert (again.head, again.chunks, str(again)) == (f.value.head, 1, str(f.value))
