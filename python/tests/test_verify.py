"""verify, parse, convert, schema, lint: the CLI's results, in every input
and output form."""

from __future__ import annotations

import json
import pathlib
import subprocess
from typing import Any

import pytest
from pydantic import ValidationError

import groundcite
from groundcite import (
    CitationFormatError,
    Contract,
    GroundedAnswer,
    InputError,
    QuoteLocation,
    TableHeader,
    convert,
    lint,
    parse,
    schema,
    verify,
)

from conftest import without_stamp


def run_cli(cli: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cli, *args], capture_output=True, text=True, check=False)


def test_verify_gives_the_cli_contract(cli: str, root: pathlib.Path, refunds: Any) -> None:
    answer, chunks = refunds
    cp = run_cli(
        cli, "verify", "--answer", str(root / "examples/refunds/answer.json"),
        "--chunks", str(root / "examples/refunds/chunks.json"),
        "--question", "Can I get a refund?", "--trace-id", "t-1", "--model", "m",
    )
    assert cp.returncode == 0, cp.stderr
    expected = json.loads(cp.stdout)
    got = verify(answer, chunks, question="Can I get a refund?", trace_id="t-1", model="m")
    assert isinstance(got, Contract)
    assert without_stamp(got.model_dump()) == without_stamp(expected)
    assert got.trace_id == "t-1"


def test_every_input_form_gives_the_same_contract(refunds: Any) -> None:
    answer, chunks = refunds
    as_model = GroundedAnswer.model_validate(answer)
    chunk_models = [groundcite.Chunk.model_validate(c) for c in chunks]
    forms = [
        (answer, chunks),
        (as_model, chunk_models),
        (json.dumps(answer), json.dumps(chunks)),
        (json.dumps(answer).encode(), json.dumps(chunks).encode()),
        (json.dumps(answer, ensure_ascii=False), tuple(chunks)),
    ]
    results = [verify(a, c, trace_id="same", output="dict") for a, c in forms]
    for r in results[1:]:
        assert without_stamp(r) == without_stamp(results[0])
    assert results[0]["answerable"] is True
    assert [w["code"] for w in results[0]["warnings"]] == [
        "unsupported_quantity", "merged_chunk_ids", "unknown_chunk_id",
        "claim_unsupported", "unsafe_source_url",
    ]


def test_a_located_citation_round_trips_and_an_unlocated_one_has_no_location_key(refunds: Any) -> None:
    # `citations[].location` is optional and additive (contract v1): `ask`
    # over PDFs sets it; elsewhere the key is absent, never null.
    answer, chunks = refunds
    as_dict = json.loads(verify(answer, chunks, trace_id="t-3", output="json"))
    cited = as_dict["claims"][0]["citations"][0]
    assert "location" not in cited
    assert "location" not in Contract.model_validate(as_dict).model_dump()["claims"][0]["citations"][0]
    cited["location"] = {"page_number": 2, "rects": [[72.0, 696.5, 340.25, 718.0], [72.0, 656.5, 260.0, 678.0]]}
    model = Contract.model_validate(as_dict)
    loc = model.claims[0].citations[0].location
    assert isinstance(loc, QuoteLocation) and loc.page_number == 2
    assert model.model_dump() == as_dict
    assert json.dumps(model.model_dump()) == json.dumps(as_dict)
    assert json.loads(model.model_dump_json()) == as_dict
    for bad in ({"page_number": 0, "rects": [[1.0, 2.0, 3.0, 4.0]]}, {"page_number": 1, "rects": []},
                {"page_number": 1, "rects": [[1.0, 2.0, 3.0]]}, {"page_number": 1, "rects": [[1, 2, 3, 4]], "x": 1}):
        cited["location"] = bad
        with pytest.raises(ValidationError):
            Contract.model_validate(as_dict)


def test_a_quoted_table_row_carries_its_header_row() -> None:
    # `citations[].table_header` is optional and additive (contract v1): the
    # verifier finds it in the chunk; a quote that is no table row has none.
    content = "Errors:\n\n| Code | Meaning |\n|---|---|\n| RM-4221 | The key was revoked. |"
    chunks = [{"chunk_id": "errors#1", "content": content}]
    answer = {"answerable": True, "claims": [
        {"text": "RM-4221 means the key was revoked.",
         "citations": [{"chunk_id": "errors#1", "quote": "| RM-4221 | The key was revoked. |"}]},
        {"text": "Errors are listed.", "citations": [{"chunk_id": "errors#1", "quote": "Errors:"}]},
    ]}
    as_dict = json.loads(verify(answer, chunks, trace_id="t-4", output="json"))
    header = as_dict["claims"][0]["citations"][0]["table_header"]
    start = content.index("| Code")
    assert header == {"source_text": "| Code | Meaning |", "span": {"start": start, "end": start + 18}}
    assert content[header["span"]["start"]:header["span"]["end"]] == header["source_text"]
    assert "table_header" not in as_dict["claims"][1]["citations"][0]
    model = Contract.model_validate(as_dict)
    assert isinstance(model.claims[0].citations[0].table_header, TableHeader)
    assert model.model_dump() == as_dict
    as_dict["claims"][0]["citations"][0]["table_header"]["x"] = 1
    with pytest.raises(ValidationError):
        Contract.model_validate(as_dict)


def test_outputs_agree(refunds: Any) -> None:
    answer, chunks = refunds
    text = verify(answer, chunks, trace_id="t-2", output="json")
    assert isinstance(text, str) and "\n" not in text
    as_dict = json.loads(text)
    model = Contract.model_validate_json(text)
    # model_dump() is exactly the contract's JSON: same keys, same order,
    # None for null.
    assert model.model_dump() == as_dict
    assert list(model.model_dump()) == list(as_dict)
    assert json.dumps(model.model_dump()) == json.dumps(as_dict)
    # output="dict" (built in Rust) is json.loads of the text: keys, order, types.
    built = verify(answer, chunks, trace_id="t-2", output="dict")
    assert json.dumps(without_stamp(built)) == json.dumps(without_stamp(as_dict))


def test_model_dump_is_the_contract_json_on_the_workload(workload: list[str]) -> None:
    texts = groundcite.verify_many(workload, output="json", jobs=2)
    kinds: set[Any] = set()
    for text in texts:
        model = Contract.model_validate_json(text)
        assert model.model_dump() == json.loads(text)
        kinds.add((model.answerable, model.refusal and model.refusal.code))
        for claim in model.claims:
            for c in claim.citations:
                kinds.add(c.match)
    # The workload exercises answers, R1 and R2 refusals, exact and normalized quotes.
    assert {(True, None), (False, "R1"), "exact", "normalized"} <= kinds


def test_bad_input_names_argument_path_and_message_like_the_cli(
    cli: str, tmp_path: pathlib.Path, refunds: Any
) -> None:
    _, chunks = refunds
    bad = '{"answerable": true,\n "claims": [{"text": 1, "citations": []}]}'
    (tmp_path / "answer.json").write_text(bad)
    (tmp_path / "chunks.json").write_text(json.dumps(chunks))
    cp = run_cli(cli, "verify", "--answer", str(tmp_path / "answer.json"),
                 "--chunks", str(tmp_path / "chunks.json"))
    assert cp.returncode == 2
    with pytest.raises(InputError) as e:
        verify(bad, chunks)
    assert isinstance(e.value, ValueError)
    assert (e.value.source, e.value.path, e.value.line, e.value.column) == (
        "answer", "claims[0].text", 2, 22,
    )
    # The CLI prints `error: FILE:LINE:COL: at PATH: MESSAGE`.
    cli_tail = cp.stderr.strip().split(str(tmp_path / "answer.json"), 1)[1]
    assert str(e.value) == "answer" + cli_tail
    assert e.value.code == "bad_input" and e.value.exit_code == 2


def test_duplicate_chunk_ids_are_bad_input() -> None:
    chunks = [{"chunk_id": "a", "content": "x"}, {"chunk_id": "a", "content": "y"}]
    with pytest.raises(InputError) as e:
        verify({"answerable": False, "claims": []}, chunks)
    assert (e.value.source, e.value.path) == ("chunks", "[1].chunk_id")
    assert e.value.message.startswith("duplicate chunk_id")


@pytest.mark.parametrize(
    "kwargs, source",
    [
        ({"trace_id": "has space"}, "trace_id"),
        ({"profile": "fuzzy"}, "profile"),
        ({"claims": "maybe"}, "claims"),
        ({"output": "xml"}, "output"),
    ],
)
def test_bad_options_are_bad_input(refunds: Any, kwargs: dict[str, Any], source: str) -> None:
    answer, chunks = refunds
    with pytest.raises(InputError) as e:
        verify(answer, chunks, **kwargs)
    assert e.value.source == source


def test_lenient_claims_keep_a_claim_with_an_unsupported_quantity(refunds: Any) -> None:
    answer, chunks = refunds
    strict = verify(answer, chunks)
    lenient = verify(answer, chunks, claims="lenient")
    assert len(lenient.claims) == len(strict.claims) + 1


def test_parse_verifies_prose_and_raises_when_nothing_is_cited(
    cli: str, root: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    chunks_file = root / "testdata/prose/cli/chunks.json"
    chunks = json.loads(chunks_file.read_text())
    text = "No markers anywhere in this answer."
    (tmp_path / "a.txt").write_text(text)
    cp = run_cli(cli, "parse", "--chunks", str(chunks_file),
                 "--text", str(tmp_path / "a.txt"))
    assert cp.returncode == 3
    with pytest.raises(CitationFormatError) as e:
        parse(text, chunks)
    assert e.value.exit_code == 3 and e.value.head == text
    assert str(e.value) == "text" + cp.stderr.strip().split(str(tmp_path / "a.txt"), 1)[1]
    with pytest.raises(InputError):
        parse("   ", chunks)
    for name in ("answer.md", "sources.md"):
        answer_file = root / "testdata/prose/cli" / name
        cp = run_cli(cli, "parse", "--chunks", str(chunks_file), "--text", str(answer_file),
                     "--trace-id", "p-1")
        assert cp.returncode == 0, cp.stderr
        got = parse(answer_file.read_text(), chunks, trace_id="p-1", output="dict")
        assert without_stamp(got) == without_stamp(json.loads(cp.stdout))
        assert got["answerable"] is True


def test_convert_matches_the_cli_on_every_native_case(cli: str, root: pathlib.Path) -> None:
    base = root / "testdata/native"
    cases = json.loads((base / "cases.json").read_text())
    assert len(cases) >= 10
    for case in cases:
        args = ["convert", "--from", case["from"], "--response", str(base / case["response"]),
                "--chunks", str(base / case["chunks"]), "--trace-id", "c-1"]
        request = None
        if "request" in case:
            args += ["--request", str(base / case["request"])]
            request = (base / case["request"]).read_text()
        cp = run_cli(cli, *args)
        response = (base / case["response"]).read_text()
        chunks = json.loads((base / case["chunks"]).read_text())
        if cp.returncode == 0:
            got = convert(case["from"], response, chunks, request=request, trace_id="c-1",
                          output="dict")
            assert without_stamp(got) == without_stamp(json.loads(cp.stdout)), case["name"]
        else:
            assert cp.returncode == 2, (case["name"], cp.stderr)
            with pytest.raises(InputError) as e:
                convert(case["from"], response, chunks, request=request)
            assert e.value.message in cp.stderr, (case["name"], str(e.value), cp.stderr)
    with pytest.raises(InputError) as e:
        convert("bard", "{}", [])  # type: ignore[call-overload]
    assert e.value.source == "provider"


def test_schema_and_lint(cli: str, tmp_path: pathlib.Path, refunds: Any) -> None:
    _, chunks = refunds
    (tmp_path / "chunks.json").write_text(json.dumps(chunks))
    for target in ("openai", "azure", "anthropic", "bedrock"):
        cp = run_cli(cli, "schema", "--target", target, "--chunk-ids-from", str(tmp_path / "chunks.json"))
        assert cp.returncode == 0, cp.stderr
        fragment = schema(target, chunks)
        assert dict(fragment) == json.loads(cp.stdout)
        assert fragment.notes == [l[len("note: "):] for l in cp.stderr.splitlines()]
        assert lint(fragment, target) == []
    ids = [c["chunk_id"] for c in chunks]
    assert schema("openai", ids) == schema("openai", chunks)
    violations = lint({"type": "object", "properties": {"q": {"type": "string", "minLength": 1}},
                       "required": ["q"], "additionalProperties": False}, "azure")
    assert [v["pointer"] for v in violations] == ["/properties/q/minLength"]
    assert set(violations[0]) == {"pointer", "rule", "message", "provider_error"}
