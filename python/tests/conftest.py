"""Shared fixtures: the repository's example request, a small benchmark
workload (bench/gen_workload.py, deterministic), and the CLI binary when
scripts/python-tests names it (GROUNDCITE_BIN)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture(scope="session")
def refunds() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """examples/refunds: an answer with a fabricated quantity, a merged and
    an unknown chunk ID, and a javascript: link."""
    answer = json.loads((ROOT / "examples/refunds/answer.json").read_text(encoding="utf-8"))
    chunks = json.loads((ROOT / "examples/refunds/chunks.json").read_text(encoding="utf-8"))
    return answer, chunks


@pytest.fixture(scope="session")
def workload(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """100 requests of the benchmark workload (20 chunks of ~2 KB each)."""
    out = tmp_path_factory.mktemp("workload") / "workload.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "bench/gen_workload.py"), "--requests", "100", "--out", str(out)],
        check=True,
    )
    return out.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="session")
def cli() -> str:
    """The groundcite binary; tests comparing with the CLI need it."""
    path = os.environ.get("GROUNDCITE_BIN")
    if not path:
        pytest.skip("GROUNDCITE_BIN is not set (scripts/python-tests sets it)")
    assert os.access(path, os.X_OK), f"GROUNDCITE_BIN={path} is not an executable"
    return path


def without_stamp(contract: dict[str, Any]) -> dict[str, Any]:
    """A contract less what differs from run to run."""
    return {k: v for k, v in contract.items() if k not in ("trace_id", "created_at")}
