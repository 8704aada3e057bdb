#!/usr/bin/env python3
"""Baseline for the load benchmark: the verify service a Python team would write.

FastAPI + uvicorn (uvloop, httptools), pydantic request validation, a bearer
API key, and the plain-Python verifier of bench/baseline_verify.py (same rule
and same renderer-contract-v1 output as `groundcite verify`), imported as is.

    BASELINE_API_KEY=secret .venv/bin/python bench/serve/fastapi_verify.py \
        [--host 127.0.0.1] [--port 8788] [--workers 1]

Routes:
  POST /v1/verify   body: one line of bench/data/workload.jsonl
                    ({question?, chunks: [...], answer: {answerable, claims}});
                    header `Authorization: Bearer <BASELINE_API_KEY>`;
                    200 -> the contract JSON; 401 without a valid key;
                    422 on a body that does not validate (or duplicate
                    chunk IDs, which the verifier rejects).
  GET  /healthz     200 {"status": "ok"}, no key needed.
  GET  /openapi.json, /docs   FastAPI's own.

Workers: --workers (or env BASELINE_WORKERS), default 1. Each worker is one
process holding the GIL while it verifies, so more workers than cores only
adds contention. Access logs are off (as in a tuned deployment): the
benchmark measures the request path, not logging.

Traces: with BASELINE_TRACE_DB=PATH each request also stores its trace
(trace ID, time, tenant, question, chunks, raw answer, contract, warnings)
in SQLite with WAL and synchronous=FULL before responding, as the service
issue requires of groundcite (the same durability: a response means a
committed trace). Without it the baseline stores nothing; the bench scripts
(bench/serve/lib.sh) set it unless BASELINE_TRACE_DB=none.

Install: .venv/bin/python -m pip install -r bench/serve/requirements.txt
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import sqlite3
import sys
import threading
from typing import Annotated, Optional

from fastapi import Depends, FastAPI, HTTPException
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # bench/, for baseline_verify

import baseline_verify  # noqa: E402  (bench/baseline_verify.py, unmodified)

API_KEY_ENV = "BASELINE_API_KEY"


# --- request models (what the verifier reads) ---------------------------------


class Citation(BaseModel):
    chunk_id: str
    quote: str


class Claim(BaseModel):
    text: str
    citations: list[Citation]


class Answer(BaseModel):
    answerable: bool
    claims: list[Claim] = Field(default_factory=list)


class Chunk(BaseModel):
    chunk_id: str
    content: str
    source_title: Optional[str] = None
    source_url: Optional[str] = None
    page_number: Optional[int] = None
    score: Optional[float] = None


class VerifyRequest(BaseModel):
    question: Optional[str] = None
    chunks: list[Chunk]
    answer: Answer


# --- auth ---------------------------------------------------------------------

_bearer = HTTPBearer(auto_error=False)


def require_key(
    creds: Annotated[Optional[HTTPAuthorizationCredentials], Depends(_bearer)],
) -> None:
    key = os.environ.get(API_KEY_ENV, "").encode("utf-8")
    # Constant-time comparison (hmac.compare_digest), as the Rust service does.
    ok = creds is not None and bool(key) and hmac.compare_digest(creds.credentials.encode("utf-8"), key)
    if not ok:
        raise HTTPException(
            status_code=401,
            detail="missing or invalid API key",
            headers={"WWW-Authenticate": "Bearer"},
        )


# --- traces (optional) ----------------------------------------------------------
TRACE_DB = os.environ.get("BASELINE_TRACE_DB")
_local = threading.local()


def _db() -> sqlite3.Connection:
    # One connection per thread-pool thread (sqlite3 connections are not
    # shared across threads).
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(TRACE_DB, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS traces (trace_id TEXT PRIMARY KEY, created_at TEXT, tenant TEXT,"
            " kind TEXT, question TEXT, chunks TEXT, raw_output TEXT, contract TEXT, warnings TEXT)"
        )
        _local.conn = conn
    return conn


def store_trace(body: dict, contract: dict) -> None:
    _db().execute(
        "INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            contract["trace_id"], contract["created_at"], "load", "verify", body.get("question"),
            json.dumps(body["chunks"]), json.dumps(body["answer"]), json.dumps(contract),
            json.dumps([w["code"] for w in contract["warnings"]]),
        ),
    )


# --- app ----------------------------------------------------------------------

app = FastAPI(title="groundcite baseline (FastAPI)", version="1")


@app.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


@app.post(
    "/v1/verify",
    dependencies=[Depends(require_key)],
    responses={
        200: {"description": "The renderer contract (contract_version 1)."},
        401: {"description": "Missing or invalid API key."},
        422: {"description": "The request does not validate."},
    },
)
def verify(req: VerifyRequest) -> JSONResponse:
    # A plain `def`: FastAPI runs it in its thread pool, as its docs advise for
    # blocking (here CPU-bound) work, so /healthz stays responsive.
    body = req.model_dump()
    try:
        contract = baseline_verify.verify(body)
    except ValueError as e:  # duplicate chunk_id
        raise HTTPException(status_code=422, detail=str(e)) from None
    if TRACE_DB:
        store_trace(body, contract)
    return JSONResponse(contract)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8788)
    ap.add_argument("--workers", type=int, default=int(os.environ.get("BASELINE_WORKERS", "1")))
    args = ap.parse_args()
    if not os.environ.get(API_KEY_ENV):
        print(f"error: {API_KEY_ENV} is not set", file=sys.stderr)
        return 2

    import uvicorn

    uvicorn.run(
        "fastapi_verify:app",
        app_dir=HERE,
        host=args.host,
        port=args.port,
        workers=args.workers,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
