"""Every error class venturi-gen reports: exact file, line, column, code and message.

Each case is a small declaration with one kind of mistake; the expected
output is the full list of diagnostics in text format. A run with any error
exits 1 and writes nothing.
"""

from __future__ import annotations

import json

import pytest
import yaml

from .conftest import Project

HEAD = "venturi: 1\nmodule: shop\n"

CASES: dict[str, tuple[str, list[str]]] = {
    "duplicate_key": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      order_id: int
      order_id: string
""",
        ["t.yaml:8:7: error[YAML_DUPLICATE_KEY]: duplicate key 'order_id' (first defined at line 7, "
         "column 7); YAML would silently keep only the last one"],
    ),
    "yaml_trap_value": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    doc: no
    queue: 1.10
""",
        [
            't.yaml:6:10: error[YAML_TYPE_TRAP]: YAML reads the unquoted value no as a boolean, but a '
            'string is expected here; quote it: "no"',
            't.yaml:7:12: error[YAML_TYPE_TRAP]: YAML reads the unquoted value 1.10 as a number, but a '
            'string is expected here; quote it: "1.10"',
        ],
    ),
    "yaml_trap_enum_value": (
        HEAD
        + """\
types:
  Answer:
    enum: [yes, "no", maybe]
tasks:
  Ask:
    kind: ask
    payload:
      answer: Answer
""",
        ['t.yaml:5:12: error[YAML_TYPE_TRAP]: YAML reads the unquoted value yes as a boolean, but a '
         'string is expected here; quote it: "yes"'],
    ),
    "yaml_trap_default": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      country: {type: string, default: no}
""",
        ['t.yaml:7:40: error[YAML_TYPE_TRAP]: YAML reads the unquoted default no as a boolean, but the '
         'field is string; quote it: "no"'],
    ),
    "yaml_trap_key": (
        HEAD
        + """\
tasks:
  Toggle:
    kind: toggle
    payload:
      on: bool
""",
        ['t.yaml:7:7: error[YAML_TYPE_TRAP]: YAML reads the unquoted key on as a boolean, not a string; '
         'quote it: "on"'],
    ),
    "yaml_syntax": (
        HEAD + "tasks:\n  Ship:\n    kind: ship\n    doc: a: b\n",
        # libyaml and PyYAML's pure-Python parser word this differently.
        ["t.yaml:6:11: error[YAML_SYNTAX]: mapping values are not allowed in this context"
         if hasattr(yaml, "CSafeLoader") else
         "t.yaml:6:11: error[YAML_SYNTAX]: mapping values are not allowed here"],
    ),
    "yaml_unclosed_bracket": (
        # Reported at the bracket, not at the end of the file where the parser gave up.
        HEAD + "tasks:\n  Ship:\n    kind: [ship\n",
        ["t.yaml:5:11: error[YAML_SYNTAX]: unclosed '[': the list that starts here has no closing ']'"],
    ),
    "yaml_alias": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload: &fields
      id: int
  Return:
    kind: return
    payload: *fields
""",
        # At the use (*fields), not at the anchor and not at the key.
        ["t.yaml:10:14: error[YAML_UNSUPPORTED]: YAML aliases (*name) are not supported; declare a "
         "named type under `types:` to reuse a shape"],
    ),
    "empty_file": ("", ["t.yaml:1:1: error[EMPTY_FILE]: the file is empty; expected `venturi: 1`, "
                        "`module:` and `tasks:`"]),
    "schema_unknown_and_missing_keys": (
        HEAD
        + """\
tasks:
  Ship:
    priorty: high
""",
        [
            "t.yaml:4:3: error[MISSING_KEY]: tasks.Ship is missing the required key 'kind'",
            "t.yaml:5:5: error[UNKNOWN_KEY]: unknown key 'priorty' in tasks.Ship; did you mean "
            "'priority'?",
        ],
    ),
    "schema_wrong_type_and_value": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    priority: urgent
    payload: [id]
""",
        [
            "t.yaml:6:15: error[BAD_VALUE]: 'urgent' is not one of: low, normal, high, critical",
            "t.yaml:7:14: error[WRONG_TYPE]: tasks.Ship.payload must be a mapping, not a list",
        ],
    ),
    "priority_field_schema": (
        HEAD
        + """\
tasks:
  Tape:
    kind: tape
    priority: {feld: x}
  Box:
    kind: box
    priority: [high]
""",
        [
            "t.yaml:6:5: error[MISSING_KEY]: tasks.Tape.priority is missing the required key 'field'",
            "t.yaml:6:16: error[UNKNOWN_KEY]: unknown key 'feld' in tasks.Tape.priority; did you mean "
            "'field'?",
            "t.yaml:9:15: error[WRONG_TYPE]: tasks.Box.priority must be a string or a mapping, not a list",
        ],
    ),
    "priority_field_not_levels": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      rush: bool
    priority: {field: rush}
  Pack:
    kind: pack
    payload:
      speed: {type: enum, values: [slow, high]}
    priority: {field: speed}
  Wrap:
    kind: wrap
    priority: {field: urgency}
""",
        [
            "t.yaml:8:23: error[BAD_PRIORITY_FIELD]: 'rush' is bool; a priority field must be an enum "
            "whose values are priority levels (low, normal, high, critical)",
            "t.yaml:13:23: error[BAD_PRIORITY_FIELD]: 'speed' is an enum of slow, high; a priority "
            "field must be an enum whose values are priority levels (low, normal, high, critical)",
            "t.yaml:16:23: error[UNKNOWN_KEY_PATH]: 'urgency': the payload has no field 'urgency'",
        ],
    ),
    "format_version": (
        "venturi: 2\nmodule: shop\ntasks:\n  Ship:\n    kind: ship\n",
        ["t.yaml:1:10: error[FORMAT_VERSION]: unsupported format version 2; this venturi-gen reads "
         "`venturi: 1`"],
    ),
    "invalid_identifiers": (
        """\
venturi: 1
module: 2shop
tasks:
  ship_it:
    kind: ship
    payload:
      order-id: int
""",
        [
            "t.yaml:2:9: error[INVALID_IDENTIFIER]: '2shop': expected a dotted Python module name like "
            "`bookmarks` or `myapp.jobs`",
            "t.yaml:4:3: error[INVALID_IDENTIFIER]: 'ship_it': task and type names must be PascalCase "
            "identifiers (letters and digits, starting with an upper-case letter)",
            "t.yaml:7:7: error[INVALID_IDENTIFIER]: 'order-id': field names must be identifiers "
            "(letters, digits, underscores; not starting with a digit or `__`)",
        ],
    ),
    "unknown_type": (
        HEAD
        + """\
types:
  Address:
    fields:
      street: string
tasks:
  Ship:
    kind: ship
    payload:
      to: list[Adress]
      weight: flaot
""",
        [
            # Address is used only through the unresolved reference, hence the warning.
            "t.yaml:4:3: warning[UNUSED_TYPE]: type 'Address' is declared but no task uses it",
            "t.yaml:11:16: error[UNKNOWN_TYPE]: unknown type 'Adress'; did you mean 'Address'?",
            "t.yaml:12:15: error[UNKNOWN_TYPE]: unknown type 'flaot'; did you mean 'float'?",
        ],
    ),
    "invalid_type_expression": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      a: "list["
      b: string[int]
""",
        [
            "t.yaml:7:16: error[INVALID_TYPE]: expected a type name, found the end in 'list['",
            "t.yaml:8:10: error[INVALID_TYPE]: 'string' takes no type argument; only list[T], map[T] "
            "and optional[T] do",
        ],
    ),
    "reserved_kind": (
        HEAD + "tasks:\n  Ship:\n    kind: venturi.ship\n",
        ["t.yaml:5:11: error[RESERVED_KIND]: kinds starting with 'venturi.' are reserved for venturi "
         "itself; rename 'venturi.ship'"],
    ),
    "dedup_path_unknown": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      order_id: int
    dedup: {key: orderid, on_collision: keep}
""",
        ["t.yaml:8:18: error[UNKNOWN_KEY_PATH]: 'orderid': the payload has no field 'orderid'; did "
         "you mean 'order_id'?"],
    ),
    "dedup_path_not_scalar": (
        HEAD
        + """\
types:
  Address:
    fields:
      zip: string
tasks:
  Ship:
    kind: ship
    payload:
      lines: list[int]
      to: Address
      note: optional[string]
    dedup: {key: [lines, to, note, lines.x, to.zip], on_collision: replace}
""",
        [
            "t.yaml:14:19: error[NON_SCALAR_KEY_PATH]: 'lines' is list[int]; a key must end at a "
            "scalar field (string, int, uuid, ...)",
            "t.yaml:14:26: error[NON_SCALAR_KEY_PATH]: 'to' is Address; a key must end at a scalar "
            "field (string, int, uuid, ...)",
            "t.yaml:14:30: error[NON_SCALAR_KEY_PATH]: 'note' is optional; a key needs a value in "
            "every task",
            "t.yaml:14:36: error[NON_SCALAR_KEY_PATH]: 'lines' is list[int], so the key path cannot "
            "continue into it",
        ],
    ),
    "carry_defaults": (
        HEAD
        + """\
tasks:
  Crawl:
    kind: crawl
    carry:
      page: int
      seen: {type: int, default: "3"}
      tags: {type: "list[string]", default: [a, 2]}
      since: {type: datetime, default: "2024-01-01T00:00:00"}
      cursor: optional[string]
""",
        [
            "t.yaml:7:7: error[CARRY_NO_DEFAULT]: carry field 'page' needs a default: a new job (and "
            "a job after a `replace` merge) starts from the defaults",
            "t.yaml:8:34: error[DEFAULT_TYPE]: default must be an integer, not a string",
            "t.yaml:9:49: error[YAML_TYPE_TRAP]: YAML reads the unquoted default 2 as an integer, but "
            'the field is string; quote it: "2"',
            "t.yaml:10:40: error[DEFAULT_TYPE]: default '2024-01-01T00:00:00' is not a valid datetime: "
            "a datetime default needs a timezone offset (e.g. Z or +00:00)",
        ],
    ),
    "keyword_rename_collision": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      from: string
      from_: string
""",
        ["t.yaml:8:7: error[DUPLICATE_NAME]: field 'from_' becomes the Python attribute 'from_', "
         "which field 'from' already uses; rename one of them"],
    ),
    "duration_without_unit": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    retry: {base: 10m, cap: 30s}
    timeout: 0s
    retention: 7
""",
        [
            "t.yaml:8:16: error[INVALID_DURATION]: a duration needs a unit: write 7s, 7m, ... "
            "(units: ms, s, m, h, d)",
        ],
    ),
    "duration_units_out_of_order": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    timeout: 30m1h
    retention: 0.0001s
""",
        [
            "t.yaml:6:14: error[INVALID_DURATION]: invalid duration '30m1h': write the units from the "
            "largest to the smallest, each once (e.g. 1h30m)",
            "t.yaml:7:16: error[INVALID_DURATION]: invalid duration '0.0001s': the smallest step is a "
            "millisecond",
        ],
    ),
    "backoff_range_and_zero": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    retry: {base: 10m, cap: 30s}
    timeout: 0s
""",
        [
            "t.yaml:6:29: error[BACKOFF_RANGE]: retry.cap (30s) is shorter than retry.base (10m); the "
            "cap bounds every delay, so it must be at least the base",
            "t.yaml:7:14: error[INVALID_DURATION]: '0s': a duration must be positive",
        ],
    ),
    "retry_policy": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    retry: {max_failures: 0, backoff: quadratic}
  Pay:
    kind: pay
    retry: {}
  Refund:
    kind: refund
    retry: {max_failures: "3"}
""",
        [
            "t.yaml:6:27: error[BAD_VALUE]: tasks.Ship.retry.max_failures must be at least 1",
            "t.yaml:6:39: error[BAD_VALUE]: 'quadratic' is not one of: fibonacci, exponential, linear",
            "t.yaml:9:12: error[BAD_VALUE]: tasks.Pay.retry must not be empty",
            "t.yaml:12:27: error[WRONG_TYPE]: tasks.Refund.retry.max_failures must be an integer, not a string",
        ],
    ),
    "tags": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    tags: [ok, "has space", ok]
  Pay:
    kind: pay
    tags: []
  Bill:
    kind: bill
    tags: [42, "%s"]
""" % ("x" * 65),
        [
            "t.yaml:6:11: error[BAD_VALUE]: tasks.Ship.tags lists a value more than once: 'ok'",
            "t.yaml:6:16: error[INVALID_TAG]: 'has space': a tag is 1 to 64 letters, digits or `_ . : -`",
            "t.yaml:9:11: error[BAD_VALUE]: tasks.Pay.tags must not be empty",
            't.yaml:12:12: error[YAML_TYPE_TRAP]: YAML reads the unquoted value 42 as an integer, but a '
            'string is expected here; quote it: "42"',
            f"t.yaml:12:16: error[INVALID_TAG]: '{'x' * 65}': a tag is 1 to 64 letters, digits or `_ . : -`",
        ],
    ),
    "refs_entities": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      user_id: string
    refs: {user: user_id, Customer: user_id}
  Pay:
    kind: pay
    refs: {}
  Bill:
    kind: bill
    payload:
      id: int
    refs: {account: [id]}
""",
        [
            "t.yaml:8:27: error[INVALID_REF_ENTITY]: 'Customer': an entity name is 1 to 64 lowercase "
            "letters, digits or `_`, starting with a letter (`user`, `order`)",
            "t.yaml:11:11: error[BAD_VALUE]: tasks.Pay.refs must not be empty",
            "t.yaml:16:21: error[WRONG_TYPE]: tasks.Bill.refs.account must be a string, not a list",
        ],
    ),
    "refs_paths": (
        HEAD
        + """\
types:
  Order:
    fields:
      id: int
      lines: list[int]
tasks:
  Ship:
    kind: ship
    payload:
      user_id: string
      order: Order
      note: optional[string]
    refs:
      user: usr_id
      order: order.lines
      note: note
      deep: user_id.x
""",
        [
            "t.yaml:16:13: error[UNKNOWN_KEY_PATH]: 'usr_id': the payload has no field 'usr_id'; "
            "did you mean 'user_id'?",
            "t.yaml:17:14: error[NON_SCALAR_KEY_PATH]: 'order.lines' is list[int]; a key must end at "
            "a scalar field (string, int, uuid, ...)",
            "t.yaml:18:13: error[NON_SCALAR_KEY_PATH]: 'note' is optional; a key needs a value in "
            "every task",
            "t.yaml:19:13: error[NON_SCALAR_KEY_PATH]: 'user_id' is string, so the key path cannot "
            "continue into it",
        ],
    ),
    "retry_base_without_cap": (
        HEAD
        + """\
tasks:
  Bill:
    kind: bill
    retry: {base: 1s, backoff: linear}
  Pay:
    kind: pay
    retry: {cap: 1m}
""",
        [
            "t.yaml:6:13: error[INCOMPLETE_BACKOFF]: retry.base needs retry.cap beside it: the base and "
            "the cap of the delays are given together (leave both out to use the worker's)",
            "t.yaml:9:13: error[INCOMPLETE_BACKOFF]: retry.cap needs retry.base beside it: the base and "
            "the cap of the delays are given together (leave both out to use the worker's)",
        ],
    ),
    "rate_limit_and_period": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      order_id: int
      items: {type: "list[string]"}
    rate_limit: {per: 0s, max: 5, key: account_id}
  Bill:
    kind: bill
    payload:
      order_id: int
      items: {type: "list[string]"}
    rate_limit: {per: 1s, max: 10, key: items}
    dedup: {key: order_id, on_collision: keep, period: 0s}
""",
        [
            "t.yaml:9:23: error[INVALID_DURATION]: '0s': a duration must be positive",
            "t.yaml:9:40: error[UNKNOWN_KEY_PATH]: 'account_id': the payload has no field 'account_id'",
            "t.yaml:15:41: error[NON_SCALAR_KEY_PATH]: 'items' is list[string]; a key must end at a "
            "scalar field (string, int, uuid, ...)",
            "t.yaml:16:56: error[INVALID_DURATION]: '0s': a duration must be positive",
        ],
    ),
    "sensitive_priority": (
        HEAD
        + """\
types:
  Level:
    enum: [low, normal, high, critical]
tasks:
  Ship:
    kind: ship
    payload:
      level: {type: Level, sensitive: true}
    priority: {field: level}
""",
        [
            "t.yaml:11:23: error[SENSITIVE_PRIORITY]: the priority field is sensitive, but a job's "
            "priority is stored in clear, as its own column; take the priority from another field",
        ],
    ),
    "sensitive_ref": (
        HEAD
        + """\
types:
  Contact:
    fields:
      email: {type: string, sensitive: true}
tasks:
  Notify:
    kind: notify
    payload:
      user_id: string
      contact: Contact
    refs: {user: user_id, mailbox: contact.email}
""",
        [
            "t.yaml:13:36: error[SENSITIVE_REF]: the reference 'mailbox' reads a sensitive field "
            "(contact.email), but references are stored in clear so that an erasure can find them; "
            "refer to the entity by an id that is not sensitive (a user id, not an e-mail address)",
        ],
    ),
    "sensitive_not_a_boolean": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    payload:
      note: {type: string, sensitive: "true"}
""",
        ["t.yaml:7:39: error[WRONG_TYPE]: tasks.Ship.payload.note.sensitive must be a boolean, not a string"],
    ),
    "rate_limit_max": (
        HEAD
        + """\
tasks:
  Pack:
    kind: pack
    rate_limit: {per: 1m, max: 0}
""",
        ["t.yaml:6:32: error[BAD_VALUE]: tasks.Pack.rate_limit.max must be at least 1"],
    ),
    "rate_limit_reserved_name": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    rate_limit: {per: 1s, max: 5}
  RateLimit:
    kind: rate_limit
""",
        ["t.yaml:7:3: error[RESERVED_NAME]: 'RateLimit' is used by the generated code of a module "
         "with a rate limit; choose another name"],
    ),
    "names": (
        HEAD
        + """\
types:
  Task:
    fields:
      x: int
  ShipCarry:
    fields:
      y: int
  Loop:
    fields:
      next: Loop
tasks:
  Ship:
    kind: ship
    payload:
      loop: optional[Loop]
      t: Task
      c: ShipCarry
    carry:
      n: {type: int, default: 0}
""",
        [
            "t.yaml:4:3: error[RESERVED_NAME]: 'Task' is used by the generated code; choose another name",
            "t.yaml:12:7: error[RECURSIVE_TYPE]: field 'next' makes 'Loop' contain itself; use "
            "optional[Loop] or list[Loop] to end the recursion",
            "t.yaml:14:3: error[DUPLICATE_NAME]: the generated class 'ShipCarry' of task 'Ship' "
            "collides with type 'ShipCarry'; rename one of them",
        ],
    ),
    "versions": (
        HEAD
        + """\
upgrades: handlers
types:
  ShipV1:
    fields:
      x: int
tasks:
  Ship:
    kind: ship
    version: 2
    payload:
      order_id: int
    upgrades:
      v1:
        payload:
          order_id: Crate
      v2:
        payload:
          order_id: int
  Pack:
    kind: pack
    version: 2
    upgrades:
      v1:
        doc: nothing declared
""",
        [
            "t.yaml:3:11: error[LAYOUT_CONFLICT]: handler and upgrade stubs cannot share the module "
            "'handlers'",
            "t.yaml:5:3: warning[UNUSED_TYPE]: type 'ShipV1' is declared but no task uses it",
            "t.yaml:16:9: error[DUPLICATE_NAME]: the generated class 'ShipV1' (the payload of Ship v1) "
            "collides with type 'ShipV1'; rename one of them",
            "t.yaml:17:21: error[UNKNOWN_TYPE]: unknown type 'Crate'",
            "t.yaml:18:7: error[BAD_UPGRADE]: upgrades.v2 upgrades from version 2, but the task's "
            "version is 2; raise `version` above 2, or remove the entry",
            "t.yaml:25:7: error[BAD_UPGRADE]: upgrades.v1 declares neither `payload` nor `carry`: "
            "declare the shape version 1 stored (what changed in version 2)",
        ],
    ),
    "upgrade_key_and_alias_pattern": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    aliases: ["bad kind"]
    version: 0
    upgrades:
      one: {}
""",
        [
            "t.yaml:6:15: error[INVALID_KIND]: 'bad kind': a kind uses letters, digits and `_ . : / -`, "
            "starting with a letter, digit or `_`",
            "t.yaml:7:14: error[BAD_VALUE]: tasks.Ship.version must be at least 1",
            "t.yaml:9:7: error[BAD_UPGRADE]: 'one': an upgrade is keyed by the version it upgrades "
            "from: `v1`, `v2`, ...",
        ],
    ),
    "aliases": (
        HEAD
        + """\
tasks:
  Ship:
    kind: ship
    aliases: [ship, venturi.ship, shipping]
  Pack:
    kind: shipping
    aliases: [ship2]
""",
        [
            "t.yaml:6:15: error[DUPLICATE_KIND]: 'ship' is the task's own kind; an alias is a former kind",
            "t.yaml:6:21: error[RESERVED_KIND]: kinds starting with 'venturi.' are reserved for venturi "
            "itself; rename 'venturi.ship'",
            "t.yaml:8:11: error[DUPLICATE_KIND]: kind 'shipping' is already used by task Ship "
            "(t.yaml:6:35); every task needs its own kind; an alias counts as a kind",
        ],
    ),
}


def _diagnostics(result_err: str) -> list[str]:
    return [line for line in result_err.splitlines() if not line.startswith("venturi-gen")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_error(project: Project, case: str) -> None:
    text, expected = CASES[case]
    project.write("t.yaml", text)
    result = project.gen("t.yaml")
    assert result.code == 1
    assert _diagnostics(result.err) == expected
    assert result.err.splitlines()[-1].endswith("; nothing was written")
    assert project.files() == {}, "nothing may be written when there are errors"


def test_type_shape_and_layout_conflicts(project: Project) -> None:
    project.write(
        "t.yaml",
        """
        venturi: 1
        module: shop
        handlers: shop.handlers
        merges: handlers
        types:
          Both:
            fields: {a: int}
            enum: [x]
        tasks:
          Ship:
            kind: ship
        """,
    )
    result = project.gen("t.yaml")
    assert result.code == 1
    assert _diagnostics(result.err) == [
        "t.yaml:3:11: error[LAYOUT_CONFLICT]: handlers module 'shop.handlers' would be inside the "
        "generated package 'shop', which venturi-gen owns; choose a module outside it",
        "t.yaml:6:3: error[TYPE_SHAPE]: type 'Both' must declare either `fields:` (a struct) or "
        "`enum:` (a list of values)",
    ]


def test_duplicate_kind_across_files_and_every_error_in_one_run(project: Project) -> None:
    project.write("a.yaml", "venturi: 1\nmodule: a\ntasks:\n  Ship:\n    kind: ship\n")
    project.write(
        "b.yaml",
        """
        venturi: 1
        module: b
        tasks:
          Send:
            kind: ship
          Pack:
            kind: pack
            payload:
              box: Crate
        """,
    )
    project.write("c.yaml", "venturi: 1\nmodule: c\ntasks:\n  Bad:\n    kind: bad\n    doc: [x]\n")
    result = project.gen("a.yaml", "b.yaml", "c.yaml")
    assert result.code == 1
    assert _diagnostics(result.err) == [
        "b.yaml:5:11: error[DUPLICATE_KIND]: kind 'ship' is already used by task Ship (a.yaml:5:11); "
        "every task needs its own kind",
        "b.yaml:9:12: error[UNKNOWN_TYPE]: unknown type 'Crate'",
        "c.yaml:6:10: error[WRONG_TYPE]: tasks.Bad.doc must be a string, not a list",
    ]
    assert result.err.splitlines()[-1] == "venturi-gen: 3 errors; nothing was written"
    assert project.files() == {}, "a.yaml is valid, but nothing is written while any input has errors"


def test_two_files_writing_the_same_package(project: Project) -> None:
    project.write("a.yaml", "venturi: 1\nmodule: shop\ntasks:\n  Ship:\n    kind: ship\n")
    project.write("b.yaml", "venturi: 1\nmodule: shop\ntasks:\n  Pack:\n    kind: pack\n")
    result = project.gen("a.yaml", "b.yaml")
    assert result.code == 1
    assert _diagnostics(result.err) == [
        "b.yaml:2:9: error[OUTPUT_CONFLICT]: this would write shop/__init__.py, which a.yaml:2:9 also "
        "writes; use another module name, task name or stub package",
        "b.yaml:2:9: error[OUTPUT_CONFLICT]: this would write shop/tasks.py, which a.yaml:2:9 also "
        "writes; use another module name, task name or stub package",
        "b.yaml:2:9: error[OUTPUT_CONFLICT]: this would write shop/worker.py, which a.yaml:2:9 also "
        "writes; use another module name, task name or stub package",
    ]


def test_json_format(project: Project) -> None:
    project.write("t.yaml", HEAD + "tasks:\n  Ship:\n    kind: ship\n    doc: no\n")
    result = project.gen("t.yaml", "--format", "json")
    assert result.code == 1
    assert result.err == ""
    document = json.loads(result.out)
    assert document["ok"] is False
    assert document["diagnostics"] == [
        {
            "file": "t.yaml",
            "line": 6,
            "column": 10,
            "severity": "error",
            "code": "YAML_TYPE_TRAP",
            "message": 'YAML reads the unquoted value no as a boolean, but a string is expected here; '
            'quote it: "no"',
        }
    ]


def test_github_format(project: Project) -> None:
    project.write("dir/t.yaml", HEAD + "tasks:\n  Ship:\n    kind: ship\n    priority: urgent\n")
    result = project.gen("dir/t.yaml", "--format", "github")
    assert result.code == 1
    assert result.out.splitlines() == [
        "::error file=dir/t.yaml,line=6,col=15,title=venturi-gen BAD_VALUE::'urgent' is not one of: "
        "low, normal, high, critical"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["--format", "xml"], "invalid choice: 'xml'"),
        (["missing.yaml"], "venturi-gen: error: missing.yaml: no such file"),
        ([], "venturi-gen: error: no inputs: name declaration files, or set [tool.venturi] inputs"),
        (["--config", "nope.toml"], "venturi-gen: error: --config nope.toml: no such file"),
    ],
)
def test_usage_errors_exit_2(project: Project, args: list[str], message: str) -> None:
    result = project.gen(*args)
    assert result.code == 2
    assert message in result.err


def test_bad_configuration_exits_2(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = "tasks/*.yaml"\n')
    result = project.gen()
    assert result.code == 2
    assert "[tool.venturi] inputs must be a list of glob patterns" in result.err


def test_missing_generator_dependencies_name_the_extra(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.write("t.yaml", HEAD + "tasks:\n  Ship:\n    kind: ship\n")
    import venturi_gen.pipeline

    def without_yaml(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")

    monkeypatch.setattr(venturi_gen.pipeline, "run", without_yaml)
    result = project.gen("t.yaml")
    assert result.code == 2
    assert "yaml is not installed; venturi-gen needs the `gen` extra: pip install 'venturi[gen]'" in result.err


def test_packages_that_would_shadow_imported_modules(project: Project) -> None:
    project.write(
        "t.yaml",
        "venturi: 1\nmodule: venturi.jobs\nhandlers: json\nmerges: typing.merges\n"
        "tasks:\n  Ship:\n    kind: ship\n",
    )
    result = project.gen("t.yaml")
    assert result.code == 1
    assert _diagnostics(result.err) == [
        "t.yaml:2:9: error[RESERVED_NAME]: module 'venturi.jobs' would shadow the module 'venturi' "
        "that generated code imports; choose another name",
        "t.yaml:3:11: error[RESERVED_NAME]: handlers 'json' would shadow the module 'json' that "
        "generated code imports; choose another name",
        "t.yaml:4:9: error[RESERVED_NAME]: merges 'typing.merges' would shadow the module 'typing' "
        "that generated code imports; choose another name",
    ]


def test_a_task_named_after_a_keyword_gets_an_importable_stub(project: Project) -> None:
    project.write(
        "t.yaml",
        "venturi: 1\nmodule: shop\ntasks:\n  Import:\n    kind: import\n    payload: {key: string}\n"
        "    dedup: {key: key, on_collision: custom}\n",
    )
    assert project.gen("t.yaml").code == 0
    assert (project.root / "handlers/import_.py").is_file()
    assert "from merges.import_ import merge" in project.read("shop/tasks.py")
    assert "    import_: ImportHandlerBase[S]" in project.read("shop/worker.py")
    result = project.python("import shop.worker, handlers.import_, merges.import_")
    assert result.returncode == 0, result.stderr


SCHEDULE_CASES: dict[str, tuple[str, list[str]]] = {
    "schedule_mistakes": (
        HEAD
        + """\
tasks:
  Digest:
    kind: digest
    payload:
      period: {type: enum, values: [daily, weekly]}
      limit: {type: int, default: 20}
    schedule:
      cron: "0 25 * * *"
      timezone: Europe/Atlantis
      payload: {limit: many, colour: blue}
  Sweep:
    kind: sweep
    schedule: {cron: "* * * * *", every: 1m}
""",
        [
            "t.yaml:10:13: error[BAD_SCHEDULE]: invalid cron expression '0 25 * * *': Bad hour; five "
            "fields: minute hour day-of-month month day-of-week",
            "t.yaml:11:17: error[BAD_SCHEDULE]: unknown time zone 'Europe/Atlantis': use an IANA name "
            "such as 'Europe/Paris' or 'America/New_York'",
            "t.yaml:12:16: error[BAD_SCHEDULE]: payload field 'period' has no default: give its value "
            "under schedule.payload, or declare a default",
            "t.yaml:12:24: error[DEFAULT_TYPE]: value must be an integer, not a string",
            "t.yaml:12:30: error[BAD_SCHEDULE]: the payload has no field 'colour' (its fields: limit, "
            "period)",
            "t.yaml:15:5: error[BAD_SCHEDULE]: a schedule needs exactly one of `cron` (e.g. \"0 7 * * *\") "
            "and `every` (e.g. 15m)",
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(SCHEDULE_CASES))
def test_schedule_errors(project: Project, case: str) -> None:
    source, expected = SCHEDULE_CASES[case]
    project.write("t.yaml", source)
    result = project.gen("t.yaml")
    assert result.code == 1
    assert _diagnostics(result.err) == expected
    assert project.files() == {}, "nothing may be written when there are errors"
