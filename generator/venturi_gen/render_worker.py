"""The worker interface (``<package>/worker.py``) and the user-owned stubs.

The interface is regenerated every run: one ``<Task>HandlerBase`` per task
with the exact ``handle`` signature, ``Handlers`` and ``register_all``. The
stubs subclass it and are written once; because only the base moves when a
declaration changes, mypy reports any drift inside the user's stub.
"""

from __future__ import annotations

from venturi_gen.layout import first_party
from venturi_gen.model import ModuleDecl, TaskDecl
from venturi_gen.names import article
from venturi_gen.pyexpr import STUB_LINE_LENGTH, Code, docstring, ident, literal, wrap
from venturi_gen.templating import header, import_block, imports, render_template


def worker(m: ModuleDecl) -> tuple[str, ...]:
    """Chunks of ``<package>/worker.py``."""
    by_module = imports({"abstractmethod", "dataclass", "Any", "Generic", "TypeVar"})
    by_module["venturi.worker"] = {"Context", "Handler", "Outcome", "Worker"}
    by_module["."] = {"tasks"}
    if any(t.carry is None for t in m.tasks):
        by_module["venturi"] = {"NoCarry"}
    doc = (
        f"Worker interface of {m.layout.package}, generated from {m.source}.\n\n"
        "One handler base class per task, with the exact ``handle`` signature, and\n"
        f"``register_all``. Subclass the bases in your own modules (venturi-gen creates stubs in\n"
        f"``{m.layout.handlers}``); this module is regenerated every time."
    )
    chunks = [header(m.source, import_block(by_module), doc) + '\nS = TypeVar("S")\n']
    for t in m.tasks:
        carry = Code(f"tasks.{t.carry.name}") if t.carry else Code("NoCarry")
        output = Code(f"tasks.{t.output.name}") if t.output else Code("None")
        params = ["self", f"task: tasks.{t.name}", f"ctx: Context[{carry}]", "state: S"]
        how = (
            "\n\n``handle`` is a plain function (``handle: sync``): the worker runs it on its\n"
            "thread pool, so it may block."
            if t.sync_handler else ""
        )
        context = {
            "name": ident(t.name),
            "class_line": wrap("", f"class {t.name}HandlerBase(", [f"Handler[tasks.{t.name}, {carry}, S]"], "):"),
            "doc": docstring(f"Runs {t.kind} jobs. Subclass it and implement ``handle``.{how}", "    "),
            # black's layout of a body that is only ``...``: on the signature's last line.
            "handle_def": wrap("    ", f"{_def(t)} handle(", params, f") -> Outcome[{output}]: ..."),
        }
        chunks.append(render_template("handler_base.jinja", t=context))
    rows = [{"name": ident(t.name), "attr": ident(t.snake), "attr_literal": literal(t.snake)} for t in m.tasks]
    chunks.append(
        render_template(
            "handlers.jinja",
            tasks=rows,
            doc=docstring(f"One handler per task of {m.layout.package}, for ``register_all``.", "    "),
            register_doc=docstring(
                "Register every handler on ``worker``.\n\nRaises ``TypeError`` before the worker "
                "starts if a task has no handler, or the\nwrong one.",
                "    ",
            ),
        )
    )
    return tuple(chunks)


def _def(t: TaskDecl) -> str:
    """``def`` for a task declared ``handle: sync``, else ``async def``."""
    return "def" if t.sync_handler else "async def"


def _raise(indent: str, message: str, line_length: int) -> Code:
    return wrap(indent, "raise NotImplementedError(", [literal(message)], ")", line_length)


def handler_stub(m: ModuleDecl, t: TaskDecl) -> tuple[str, ...]:
    package = m.layout.package
    task_names = {t.name} | ({t.carry.name} if t.carry else set()) | ({t.output.name} if t.output else set())
    by_module = {
        "abc": {"abstractmethod"},
        f"{package}.tasks": task_names,
        f"{package}.worker": {f"{t.name}HandlerBase"},
        "venturi.worker": {"Context", "Outcome"},
    }
    if t.carry is None:
        by_module["venturi"] = {"NoCarry"}
    if m.state is not None:
        by_module.setdefault(m.state[0], set()).add(m.state[1])
    doc = f"Handler of {t.kind} jobs ({t.name}).\n\n{t.doc}"
    state = ident(m.state[1]) if m.state else Code("State")
    carry = ident(t.carry.name if t.carry else "NoCarry")
    output = ident(t.output.name) if t.output else Code("None")
    return (
        render_template(
            "handler_stub.jinja",
            name=ident(t.name),
            package=ident(package),
            doc=docstring(doc, ""),
            imports=import_block(by_module, first_party=first_party(m), line_length=STUB_LINE_LENGTH),
            state_import=m.state is not None,
            class_line=wrap("", f"class {t.name}Handler(", [f"{t.name}HandlerBase[{state}]"], "):", STUB_LINE_LENGTH),
            handle_def=wrap(
                "    ", f"{_def(t)} handle(", ["self", f"task: {t.name}", f"ctx: Context[{carry}]", f"state: {state}"],
                f") -> Outcome[{output}]:", STUB_LINE_LENGTH,
            ),
            raise_line=_raise("        ", f"{t.name}Handler.handle: handle {t.name} jobs here", STUB_LINE_LENGTH),
        ),
    )


def merge_stub(m: ModuleDecl, t: TaskDecl) -> tuple[str, ...]:
    by_module = {
        f"{m.layout.package}.tasks": {t.name} | ({t.carry.name} if t.carry else set()),
        "venturi": {"Merge", "Pending", "unfilled"} | ({"NoCarry"} if t.carry is None else set()),
    }
    carry = ident(t.carry.name if t.carry else "NoCarry")
    doc = (
        f"What enqueueing {article(t.name)} {t.name} does when a pending {t.kind} job has the same dedup key.\n\n"
        "Runs in the producer, inside the enqueue transaction: keep it quick, and import only\n"
        "producer-side code."
    )
    return (
        render_template(
            "merge_stub.jinja",
            name=ident(t.name),
            package=ident(m.layout.package),
            doc=docstring(doc, ""),
            imports=import_block(by_module, first_party=first_party(m), line_length=STUB_LINE_LENGTH),
            # The runtime refuses to enqueue the task while the stub keeps this line.
            mark=Code("@unfilled  # remove this line once merge is written: until then no producer enqueues it"),
            merge_def=wrap(
                "", "def merge(", [f"task: {t.name}", f"existing: Pending[{t.name}, {carry}]"],
                f") -> Merge[{t.name}, {carry}]:", STUB_LINE_LENGTH,
            ),
            function_doc=docstring(
                "Return Keep, Replace, Independent, or With(task, carry) to continue the pending job.",
                "    ",
            ),
            raise_line=_raise("    ", f"merge for {t.name} is not implemented", STUB_LINE_LENGTH),
        ),
    )
