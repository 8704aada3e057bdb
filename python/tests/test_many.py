"""verify_many: the CLI's --batch, line for line, in parallel with the GIL
released, in input order."""

from __future__ import annotations

import json
import pathlib
import subprocess
import threading
import time
from typing import Any

import pytest

import groundcite
from groundcite import Contract, GroundedAnswer, InputError, verify_many

from conftest import without_stamp


def cli_batch(cli: str, path: pathlib.Path, *extra: str) -> list[dict[str, Any]]:
    cp = subprocess.run([cli, "verify", "--batch", str(path), *extra], capture_output=True,
                        text=True, check=False)
    assert cp.returncode in (0, 2), cp.stderr
    return [json.loads(line) for line in cp.stdout.splitlines()]


def test_same_results_as_the_cli_line_for_line(
    cli: str, workload: list[str], tmp_path: pathlib.Path
) -> None:
    lines = list(workload[:60])
    lines[7] = '{"chunks": [}'
    lines[21] = json.dumps({"chunks": [], "answer": {"answerable": True}})
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    expected = cli_batch(cli, path, "--model", "m", "--jobs", "2")
    for jobs in (1, 2, 5):
        got = verify_many(lines, model="m", jobs=jobs, output="dict", errors="return")
        assert len(got) == len(expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            if isinstance(g, InputError):
                assert g.error_object() == e, i
            else:
                assert without_stamp(g) == without_stamp(e), i
    bad = [g for g in verify_many(lines, errors="return") if isinstance(g, InputError)]
    assert [(b.line, b.path) for b in bad] == [(8, "chunks[0]"), (22, "answer")]


def test_outputs_and_input_forms(workload: list[str]) -> None:
    lines = workload[:20]
    as_json = verify_many(lines, output="json")
    as_dicts = verify_many([json.loads(l) for l in lines], output="dict")
    as_bytes = verify_many([l.encode() for l in lines], output="model")
    with_models = [dict(json.loads(l)) for l in lines]
    for r in with_models:
        r["answer"] = GroundedAnswer.model_validate(r["answer"])
    as_models = verify_many(with_models)
    assert all(isinstance(c, Contract) for c in as_bytes)
    for a, b, c, d in zip(as_json, as_dicts, as_bytes, as_models):
        assert without_stamp(json.loads(a)) == without_stamp(b)
        # The dicts are json.loads's: same keys, order and types (1.0 stays a float).
        assert json.dumps(without_stamp(json.loads(a))) == json.dumps(without_stamp(b))
        assert without_stamp(c.model_dump()) == without_stamp(b)
        assert without_stamp(d.model_dump()) == without_stamp(b)


def test_order_is_kept_and_trace_ids_pass_through(workload: list[str]) -> None:
    requests = []
    for i, line in enumerate(workload):
        r = json.loads(line)
        r["trace_id"] = f"req-{i}"
        requests.append(r)
    out = verify_many(requests, jobs=4, output="dict")
    assert [c["trace_id"] for c in out] == [f"req-{i}" for i in range(len(requests))]
    fresh = verify_many(workload[:5])
    assert len({c.trace_id for c in fresh}) == 5


def test_errors_raise_the_first_bad_request_with_its_position(workload: list[str]) -> None:
    lines = [workload[0], "not json", workload[1], 42]
    with pytest.raises(InputError) as e:
        verify_many(lines)
    assert e.value.line == 2 and e.value.source == "requests"
    out = verify_many(lines, errors="return")
    assert isinstance(out[0], Contract) and isinstance(out[2], Contract)
    assert isinstance(out[1], InputError) and isinstance(out[3], InputError)
    assert isinstance(out[3], TypeError) and out[3].line == 4
    assert out[3].error_object()["error"]["line"] == 4
    assert verify_many([]) == []
    with pytest.raises(InputError):
        verify_many(["   "])


def test_the_gil_is_released_while_verifying(workload: list[str]) -> None:
    """Another Python thread keeps running while verify_many works."""
    big = workload * 3
    verify_many(big[:10], output="json")  # warm up
    done = threading.Event()
    ticks_during = 0

    def work() -> None:
        groundcite._native.verify_many(big, jobs=1)
        done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks_during += 1
        time.sleep(0.0005)
    t.join()
    elapsed = time.perf_counter() - start
    # Holding the GIL, the loop would get at most a handful of switch
    # intervals (5 ms) before the call took it for good.
    assert elapsed > 0.05
    assert ticks_during > 20, (ticks_during, elapsed)


def test_the_collector_is_left_as_the_caller_had_it(workload: list[str]) -> None:
    """Building dicts pauses the cyclic collector and restores it, also
    when the caller had it off, and when a request fails."""
    import gc

    assert gc.isenabled()
    verify_many(workload[:5], output="dict")
    assert gc.isenabled()
    verify_many([workload[0], "not json"], output="dict", errors="return")
    assert gc.isenabled()
    with pytest.raises(InputError):
        verify_many([workload[0], "not json"], output="dict")
    assert gc.isenabled()
    gc.disable()
    try:
        verify_many(workload[:5], output="dict")
        assert not gc.isenabled()
    finally:
        gc.enable()
