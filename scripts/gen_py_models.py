#!/usr/bin/env python3
"""Generate the Python package's Pydantic v2 models of renderer contract v1
(python/groundcite/contract.py) from schemas/contract-v1.schema.json.

    python3 scripts/gen_py_models.py           # rewrite the file
    python3 scripts/gen_py_models.py --check   # exit 1 if it is stale

Standard library only (it runs before anything is installed). It reads the
schema subset the contract uses: objects with `additionalProperties: false`;
`const`, `enum`, `type` (a name or a list with "null"), `$ref` to `$defs`,
`oneOf` of null and one alternative, arrays (of arrays too), and the bounds
`minLength`, `maxLength`, `pattern`, `minimum`, `maximum`, `minItems`,
`maxItems`. A property left out of `required` is additive and optional
(contract v1's `citations[].location`): absent in the JSON when unknown, so
its field defaults to None and `model_dump()` leaves it out when None. Anything else fails the generation, so that a schema change
cannot be silently dropped. The schema's `if`/`then`/`else` rules (a
refusal exactly when not answerable, no span on a bare reference) tie
fields together; they are listed in the docstrings, and the verifier that
produced the JSON enforces them.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "contract-v1.schema.json"
OUT = ROOT / "python" / "groundcite" / "contract.py"

# $defs name -> class name (the Rust type names of groundcite-core).
CLASS = {
    "refusal": "Refusal",
    "span": "Span",
    "quantity": "QuantityFinding",
    "location": "QuoteLocation",
    "table_header": "TableHeader",
    "citation": "ContractCitation",
    "claim": "ContractClaim",
    "source": "Source",
    "warning": "Warning",
}
ROOT_CLASS = "Contract"
DOCS = {
    "Refusal": "Why a contract carries no answer (R1-R4).",
    "Span": "Code points of the chunk's original content, end exclusive.",
    "QuoteLocation": "Where a quote is drawn on its PDF page: the page and one rectangle per line.",
    "TableHeader": "The header row of the Markdown table whose row a quote starts in, from the same chunk.",
    "ContractCitation": "A verified citation: its footnote, chunk, quote and where the quote is in the chunk.",
    "ContractClaim": "A verified claim with its verified citations.",
    "Source": "A cited chunk, listed once; missing metadata is None, never a default.",
    "Warning": "Something dropped or changed during verification, and why.",
}
KNOWN = {
    "type", "const", "enum", "$ref", "oneOf", "items", "minLength", "maxLength",
    "pattern", "minimum", "maximum", "minItems", "maxItems", "description",
}
CONDITIONS = {
    "Contract": [
        "answerable is True: refusal is None, claims and sources are not empty.",
        "answerable is False: refusal is set, claims and sources are empty.",
    ],
    "ContractCitation": [
        'match == "reference": source_text and span are None, location and table_header absent.',
        "otherwise: quote, source_text and span are set.",
    ],
    "Refusal": ["code and reason agree: R1 no_answer_in_sources, R2 citations_unverified, R3 generation_failed, R4 model_refused."],
}


class Unsupported(Exception):
    pass


def ref_class(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix) or ref[len(prefix):] not in CLASS:
        raise Unsupported(f"$ref {ref!r}")
    return CLASS[ref[len(prefix):]]


def literal(values: list) -> str:
    return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"


def scalar(name: str) -> str:
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}[name]


def constraints(prop: dict) -> list[str]:
    out = []
    if "minLength" in prop:
        out.append(f"min_length={prop['minLength']}")
    if "maxLength" in prop:
        out.append(f"max_length={prop['maxLength']}")
    if "pattern" in prop:
        out.append(f"pattern={prop['pattern']!r}")
    if "minimum" in prop:
        out.append(f"ge={prop['minimum']}")
    if "maximum" in prop:
        out.append(f"le={prop['maximum']}")
    return out


def annotate(base: str, cons: list[str]) -> str:
    return f"Annotated[{base}, Field({', '.join(cons)})]" if cons else base


def field_type(prop: dict, where: str) -> tuple[str, None]:
    """The annotation of a property (bounds as Annotated Field constraints)."""
    unknown = set(prop) - KNOWN
    if unknown:
        raise Unsupported(f"{where}: keywords {sorted(unknown)}")
    if "const" in prop:
        return literal([prop["const"]]), None
    if "enum" in prop:
        return literal(prop["enum"]), None
    if "$ref" in prop:
        return ref_class(prop["$ref"]), None
    if "oneOf" in prop:
        alts = prop["oneOf"]
        nulls = [a for a in alts if a == {"type": "null"}]
        others = [a for a in alts if a != {"type": "null"}]
        if len(nulls) != 1 or len(others) != 1:
            raise Unsupported(f"{where}: oneOf other than null | one type")
        inner, _ = field_type(others[0], where)
        return f"Optional[{inner}]", None
    kind = prop.get("type")
    if kind == "array":
        item, _ = field_type(prop["items"], where + "[]")
        cons = [f"min_length={prop['minItems']}"] if "minItems" in prop else []
        cons += [f"max_length={prop['maxItems']}"] if "maxItems" in prop else []
        return annotate(f"list[{item}]", cons), None
    if isinstance(kind, list):
        names = [k for k in kind if k != "null"]
        if len(names) != 1 or len(kind) != 2:
            raise Unsupported(f"{where}: type {kind}")
        return f"Optional[{annotate(scalar(names[0]), constraints(prop))}]", None
    if isinstance(kind, str):
        return annotate(scalar(kind), constraints(prop)), None
    raise Unsupported(f"{where}: no type")


def model(name: str, schema: dict, doc: str) -> str:
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        raise Unsupported(f"{name}: not a closed object")
    props = schema["properties"]
    if not set(schema["required"]) <= set(props):
        raise Unsupported(f"{name}: required names an unknown property")
    optional = [k for k in props if k not in schema["required"]]
    # Optional properties come last, as the Rust serializer writes them.
    if list(props)[len(props) - len(optional):] != optional:
        raise Unsupported(f"{name}: optional properties must come last")
    lines = [f"class {name}(BaseModel):"]
    doc_lines = [doc]
    if name in CONDITIONS:
        doc_lines += ["", "Rules across fields (checked by the verifier, not by this model):"]
        doc_lines += [f"- {c}" for c in CONDITIONS[name]]
    body = "\n".join(("    " + d) if d else "" for d in doc_lines).strip()
    lines.append('    """' + body + ("\n    " if len(doc_lines) > 1 else "") + '"""')
    lines.append("")
    lines.append('    model_config = ConfigDict(extra="forbid")')
    lines.append("")
    for key, prop in props.items():
        if not key.isidentifier():
            raise Unsupported(f"{name}.{key}: not an identifier")
        annotation, default = field_type(prop, f"{name}.{key}")
        if key in optional:
            if annotation.startswith("Optional["):
                raise Unsupported(f"{name}.{key}: optional and nullable")
            annotation, default = f"Optional[{annotation}]", "None"
        if prop.get("description"):
            lines.append(f"    #: {prop['description']}")
        lines.append(f"    {key}: {annotation}" + (f" = {default}" if default else ""))
    if optional:
        names = ", ".join(json.dumps(k) for k in optional)
        lines += [
            "",
            '    @model_serializer(mode="wrap")',
            "    def _leave_out_unknown(self, handler: SerializerFunctionWrapHandler) -> Any:",
            '        """Optional fields that are None are absent, as in the contract\'s JSON."""',
            "        data = handler(self)",
            "        if isinstance(data, dict):",
            f"            for key in ({names},):",
            "                if data.get(key, 0) is None:",
            "                    del data[key]",
            "        return data",
        ]
    return "\n".join(lines)


def order(defs: dict) -> list[str]:
    """$defs in dependency order (a class after those it names)."""
    deps = {k: set(json.dumps(v).split('"#/$defs/')[1:]) for k, v in defs.items()}
    deps = {k: {d.split('"')[0] for d in v} for k, v in deps.items()}
    done: list[str] = []
    while len(done) < len(defs):
        ready = sorted(k for k in defs if k not in done and deps[k] <= set(done))
        if not ready:
            raise Unsupported("cyclic $defs")
        done += ready
    return done


def generate() -> str:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    if set(defs) != set(CLASS):
        raise Unsupported(f"$defs {sorted(defs)} differ from the known {sorted(CLASS)}")
    parts = [
        "# Generated by scripts/gen_py_models.py from schemas/contract-v1.schema.json.",
        "# Do not edit: regenerate with `python3 scripts/gen_py_models.py`",
        "# (scripts/test fails when this file is stale).",
        '"""Renderer contract v1 as Pydantic v2 models.',
        "",
        "`Contract.model_dump()` is exactly the contract's JSON (every field",
        "present, None for null); `Contract.model_validate_json(text)` reads it.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Annotated, Any, Literal, Optional",
        "",
        "from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer",
        "",
        "__all__ = [" + ", ".join(json.dumps(n) for n in [ROOT_CLASS, *[CLASS[k] for k in order(defs)]]) + "]",
    ]
    for key in order(defs):
        cls = CLASS[key]
        parts += ["", "", model(cls, defs[key], defs[key].get("description") or DOCS[cls])]
    parts += ["", "", model(ROOT_CLASS, schema, schema["description"])]
    return "\n".join(parts) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = ap.parse_args()
    try:
        text = generate()
    except Unsupported as e:
        print(f"gen_py_models: unsupported schema construct: {e}", file=sys.stderr)
        return 2
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale; run python3 scripts/gen_py_models.py", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(ROOT)} is up to date")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
