"""Verifying a table of answers on Apache Spark, one ``verify_many`` per
Arrow batch of each partition (``DataFrame.mapInArrow``).

    from groundcite.spark import verify_table

    # requests: a DataFrame with a string column "request" (one batch-file
    # line each: {"question"?, "chunks", "answer", "trace_id"?, "model"?})
    # and a key column, here "line".
    contracts = verify_table(requests, key="line")   # columns: line, contract

Each output row holds the contract as JSON text, exactly the line
``groundcite verify --batch`` writes for that request, or, for a bad
request, the CLI's error object (``{"error": {"code": "bad_input", "line",
"path", "message"}}``) with the row's key as its ``line`` when the key is an
integer column. Rows keep their key, so the result joins back to the input;
Spark does not promise an order, so sort by the key to read it in order.

Spark runs one task per core, so each task verifies on one thread
(``jobs=1``) by default. The executors need the ``groundcite`` wheel:
``pip install`` it on every node, or ship it with the job (see
docs/python.md). Only ``pyarrow`` is needed besides pyspark.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from typing import Any, Optional

from ._api import ClaimPolicy, Profile, verify_many
from .errors import InputError

__all__ = ["verify_batches", "verify_table"]


def verify_batches(
    batches: Iterable[Any],
    *,
    request: str = "request",
    key: Optional[str] = None,
    model: Optional[str] = None,
    jobs: Optional[int] = 1,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
) -> Iterator[Any]:
    """The function ``mapInArrow`` runs on each partition: for every
    ``pyarrow.RecordBatch``, the key column (when given) and ``contract``
    (string). Usable without Spark on any iterator of record batches."""
    import pyarrow as pa

    for batch in batches:
        requests = batch.column(request).to_pylist()
        keys = batch.column(key).to_pylist() if key is not None else None
        results = verify_many(
            requests, model=model, jobs=jobs, profile=profile, claims=claims,
            output="json", errors="return",
        )
        out: list[str] = []
        for i, r in enumerate(results):
            if isinstance(r, InputError):
                line = keys[i] if keys is not None and isinstance(keys[i], int) else None
                r = json.dumps(r.error_object(line), ensure_ascii=False, separators=(",", ":"))
            out.append(r)
        columns = [pa.array(out, pa.string())]
        names = ["contract"]
        if key is not None:
            columns.insert(0, batch.column(key))
            names.insert(0, key)
        yield pa.RecordBatch.from_arrays(columns, names=names)


def verify_table(
    df: Any,
    *,
    request: str = "request",
    key: str = "line",
    model: Optional[str] = None,
    jobs: Optional[int] = 1,
    profile: Profile = "default",
    claims: ClaimPolicy = "strict",
) -> Any:
    """``df.mapInArrow`` over :func:`verify_batches`: a DataFrame of the
    key column and ``contract`` (string)."""
    key_type = dict(df.dtypes)[key]
    fn = functools.partial(
        verify_batches, request=request, key=key, model=model, jobs=jobs,
        profile=profile, claims=claims,
    )
    return df.select(key, request).mapInArrow(fn, f"`{key}` {key_type}, contract string")
