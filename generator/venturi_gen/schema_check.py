"""Validate a loaded declaration against the published JSON Schema, with source positions.

jsonschema validates plain values and reports JSON paths; this module maps
each error back to the YAML node it concerns (the value for a type error, the
key for an unknown or missing key) and rewrites jsonschema's messages into
short, actionable ones. Schema nodes may carry ``x-venturi-code`` and
``x-venturi-message`` to name the error code and explain a failed ``pattern``
in words rather than as a regular expression.
"""

from __future__ import annotations

import difflib
import functools
import json
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from venturi_gen.diagnostics import Diagnostic
from venturi_gen.loader import Document, Path, is_trap

SCHEMA_FILE = "venturi-tasks.schema.json"

_JSON_TYPES = {
    "string": "a string",
    "object": "a mapping",
    "array": "a list",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


@functools.cache
def schema() -> dict[str, Any]:
    """The declaration schema shipped as ``venturi_gen.schemas``."""
    text = resources.files("venturi_gen.schemas").joinpath(SCHEMA_FILE).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(schema())


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a YAML {type(value).__name__}"


def where(path: Path) -> str:
    """``tasks.FetchBookmark.payload`` — the human name of a location."""
    return ".".join(str(part) for part in path) or "the file"


def trap_message(doc: Document, path: Path, expected: str) -> str | None:
    """The YAML-trap explanation when the value at ``path`` is an unquoted non-string scalar."""
    entry = doc.entry(path)
    node = entry.value if entry is not None else None
    trap = is_trap(node)
    if trap is None or node is None:
        return None
    if node.value == "":
        return f"{where(path)} has no value; expected {expected}"
    return (
        f"YAML reads the unquoted value {node.value} as {trap}, but {expected} is expected "
        f'here; quote it: "{node.value}"'
    )


def validate(doc: Document) -> list[Diagnostic]:
    """Every schema violation in ``doc``, each at its node."""
    result: list[Diagnostic] = []
    for error in _validator().iter_errors(doc.data):
        result.extend(_convert(doc, error))
    return result


def _convert(doc: Document, error: ValidationError) -> list[Diagnostic]:
    path: Path = tuple(error.absolute_path)
    sub = error.schema if isinstance(error.schema, dict) else {}
    code = sub.get("x-venturi-code", "BAD_VALUE")
    keyword = error.validator
    instance: Any = error.instance
    limit: Any = error.validator_value
    if "propertyNames" in error.absolute_schema_path:
        name = str(instance)
        explanation = sub.get("x-venturi-message", error.message)
        return [doc.error((*path, name), code, f"{name!r}: {explanation}", key=True)]
    if keyword == "additionalProperties":
        allowed = sorted(sub.get("properties", {}))
        out = []
        for name in sorted(set(instance) - set(allowed)):
            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
            out.append(
                doc.error((*path, name), "UNKNOWN_KEY",
                          f"unknown key {name!r} {'in ' + where(path) if path else 'at the top level'}; {hint}",
                          key=True)
            )
        return out
    if keyword == "required":
        missing = [name for name in limit if name not in instance]
        return [
            doc.error(path, "MISSING_KEY", f"{where(path)} is missing the required key {name!r}",
                      key=True)
            for name in missing
        ]
    if keyword == "type":
        expected_types = limit
        if isinstance(expected_types, str):
            expected_types = [expected_types]
        expected = " or ".join(_JSON_TYPES.get(t, t) for t in expected_types)
        if code == "INVALID_DURATION" and isinstance(instance, int | float) and not isinstance(instance, bool):
            return [doc.error(path, code, f"a duration needs a unit: write {instance}s, {instance}m, ... "
                              "(units: ms, s, m, h, d)")]
        if "string" in expected_types:
            trap = trap_message(doc, path, expected)
            if trap is not None:
                return [doc.error(path, "YAML_TYPE_TRAP", trap)]
        return [
            doc.error(path, "WRONG_TYPE",
                      f"{where(path)} must be {expected}, not {describe(instance)}")
        ]
    if keyword == "const":
        return [
            doc.error(path, code, f"unsupported format version {instance!r}; this "
                      f"venturi-gen reads `venturi: {limit}`")
        ]
    if keyword == "enum":
        choices = ", ".join(str(v) for v in limit)
        trap = trap_message(doc, path, f"one of {choices}")
        if trap is not None:
            return [doc.error(path, "YAML_TYPE_TRAP", trap)]
        return [doc.error(path, "BAD_VALUE", f"{instance!r} is not one of: {choices}")]
    if keyword == "pattern":
        explanation = sub.get("x-venturi-message", f"must match {limit}")
        return [doc.error(path, code, f"{instance!r}: {explanation}")]
    return [doc.error(path, "BAD_VALUE", f"{where(path)} {_constraint(error)}")]


def _constraint(error: ValidationError) -> str:
    limit: Any = error.validator_value
    instance: Any = error.instance
    keyword = error.validator
    if keyword in ("minLength", "minItems", "minProperties") and limit == 1:
        return "must not be empty"
    if keyword == "maxLength":
        return f"is longer than {limit} characters"
    if keyword == "minimum":
        return f"must be at least {limit}"
    if keyword == "uniqueItems":
        texts = [repr(value) for value in instance]
        dupes = sorted({text for text in texts if texts.count(text) > 1})
        return f"lists a value more than once: {', '.join(dupes)}"
    return error.message
