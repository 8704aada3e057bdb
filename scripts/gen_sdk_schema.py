#!/usr/bin/env python3
"""Print the `response_format` the official OpenAI Python SDK sends for the
seed's `GroundedAnswer` Pydantic models, as JSON with sorted keys.

`groundcite schema --target openai` must emit exactly this value; the fixture
testdata/schema/openai_sdk_grounded_answer.json is its committed copy and a
Rust test compares the two.

Requirements (this script installs nothing):

    pip install openai pydantic          # or: pip install -r scripts/requirements-schema.txt

Usage:

    python3 scripts/gen_sdk_schema.py            # print to stdout
    python3 scripts/gen_sdk_schema.py --write    # regenerate the fixture and its README
    python3 scripts/gen_sdk_schema.py --check    # exit 1 with a diff when the fixture is stale
                                                 # (exit 2 when openai/pydantic are missing)

The SDK versions used are printed on stderr and recorded in
testdata/schema/README.md by --write (not inside the fixture, so that a
version bump alone does not make --check fail).
"""

import argparse
import difflib
import json
import sys
from pathlib import Path

try:
    import openai
    import pydantic
    from pydantic import BaseModel, ConfigDict
except ImportError as e:  # a missing tool, not a stale fixture
    print(f"gen_sdk_schema.py: {e}; run `pip install openai pydantic` first", file=sys.stderr)
    sys.exit(2)

try:  # public re-export
    from openai.lib import type_to_response_format_param
except ImportError:  # where the SDK defines it
    from openai.lib._parsing._completions import type_to_response_format_param

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "testdata" / "schema" / "openai_sdk_grounded_answer.json"
README = ROOT / "testdata" / "schema" / "README.md"


# The seed's models, verbatim in shape (field order matters: it is the
# `properties` and `required` order the SDK emits).
class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: str
    quote: str


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    citations: list[Citation]


class GroundedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answerable: bool
    claims: list[Claim]


def render() -> str:
    fragment = {"response_format": type_to_response_format_param(GroundedAnswer)}
    return json.dumps(fragment, indent=2, ensure_ascii=False) + "\n"


def versions() -> str:
    return f"openai {openai.__version__}, pydantic {pydantic.VERSION}, Python {sys.version.split()[0]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare with the committed fixture")
    mode.add_argument("--write", action="store_true", help="rewrite the fixture and its README")
    args = parser.parse_args()

    text = render()
    print(f"generated with {versions()}", file=sys.stderr)
    if args.check:
        try:
            committed = FIXTURE.read_text(encoding="utf-8")
        except FileNotFoundError:
            print(f"{FIXTURE} is missing; run with --write", file=sys.stderr)
            return 1
        if json.loads(committed) == json.loads(text) and committed == text:
            print(f"{FIXTURE.relative_to(ROOT)} is up to date", file=sys.stderr)
            return 0
        sys.stderr.writelines(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=str(FIXTURE.relative_to(ROOT)),
                tofile="SDK output",
            )
        )
        print("fixture is stale: rerun with --write and update groundcite if the SDK changed", file=sys.stderr)
        return 1
    if args.write:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(text, encoding="utf-8")
        README.write_text(
            "# Schema fixtures\n\n"
            "- `openai_sdk_grounded_answer.json`: `{\"response_format\": type_to_response_format_param(GroundedAnswer)}`\n"
            "  from the official OpenAI Python SDK for the seed's Pydantic models, written by\n"
            f"  `scripts/gen_sdk_schema.py --write` with {versions()}.\n"
            "  Keys are sorted (`json.dumps(sort_keys=True, indent=2)`); `groundcite schema --target openai`\n"
            "  prints the same bytes (serde_json sorts keys too) and the same JSON value, `$defs`, `$ref`\n"
            "  and Pydantic titles included. The SDK itself sends `properties` in field order\n"
            "  (`text` before `citations`); only `required` keeps that order in this file.\n"
            "  `scripts/gen_sdk_schema.py --check` fails (exit 1, with a diff) when the installed SDK\n"
            "  would send something else.\n"
            "- `lint/*.json`: lint cases, one per file: `{description, target, expected: [[pointer, rule], ...], schema}`;\n"
            "  pointers are RFC 6901, relative to `schema` (a bare schema or a whole request fragment).\n"
            "  `crates/groundcite-core/tests/schema.rs` runs them all.\n",
            encoding="utf-8",
        )
        print(f"wrote {FIXTURE.relative_to(ROOT)} and {README.relative_to(ROOT)}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
