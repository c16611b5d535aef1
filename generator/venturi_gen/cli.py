"""The ``venturi-gen`` command.

    venturi-gen [INPUTS...] [--check] [--format text|json|github] [--config PYPROJECT] [--no-cache]
    venturi-gen review --against REV_OR_DIR [--format text|json|github|markdown] [--allow-invalid-base] [--config PYPROJECT]
    venturi-gen docs [--output FILE [--check]] [--config PYPROJECT]
    venturi-gen schema [--path]

Without INPUTS, the declaration files are the ``[tool.venturi] inputs``
globs of the project's pyproject.toml, so ``venturi-gen`` and
``venturi-gen --check`` need no flags in a build step or in CI.

Exit status: 0 success (or up to date); 1 declaration errors, or with
``--check`` stale or missing output; 2 usage, configuration or internal
error; 130 interrupted (every file is then either untouched or complete).

Human output (diagnostics, summaries) goes to stderr and a ``--check`` diff to
stdout; ``--format json`` and ``--format github`` write only to stdout.
Heavy modules (yaml, jsonschema, jinja2, black) are imported only when the
cache cannot answer, which keeps a no-op run fast.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from venturi_gen.config import Config, ConfigError
from venturi_gen.diagnostics import (
    Diagnostic,
    Severity,
    dumps_json,
    github_command,
    github_line,
    printable,
    summary,
)

if TYPE_CHECKING:
    from venturi_gen.pipeline import RunResult

#: What the `gen` extra installs: imported lazily, so the runtime never needs them.
_GEN_DEPENDENCIES = frozenset({"yaml", "jinja2", "jsonschema", "black"})
_LISTED = 25  # files listed by name after a generation

_USAGE = """\
venturi-gen [INPUT ...] [--check] [--format text|json|github] [--config PYPROJECT] [--no-cache]
       venturi-gen review --against REV_OR_DIR [--format text|json|github|markdown] [--allow-invalid-base] [--config PYPROJECT]
       venturi-gen docs [INPUT ...] [--output FILE [--check]] [--config PYPROJECT]
       venturi-gen schema [--path]
       venturi-gen --version"""

_EPILOG = """\
commands:
  (none)   validate the declarations and generate code (or, with --check, compare it)
  review   what a declaration change does to jobs already stored (venturi-gen review --help)
  docs     Markdown documentation of every declared task (venturi-gen docs --help)
  schema   print the declaration JSON Schema, or with --path where it is installed

exit status: 0 ok, 1 declaration errors or stale output (--check), 2 usage or internal error.
Reference of the declaration format: docs/declarations.md. JSON Schema: `venturi-gen schema --path`.
"""


class _Version(argparse.Action):
    """``--version``, reading the installed version only when asked (importlib.metadata is slow)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        installed = "unknown"  # a source tree on sys.path, not installed
        for distribution in ("venturi-gen", "venturi"):
            try:
                installed = version(distribution)
                break
            except PackageNotFoundError:
                continue
        print(f"{parser.prog} {installed}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="venturi-gen",
        usage=_USAGE,
        description="Validate venturi task declarations (YAML) and generate typed Python:\n"
        "producer modules, worker interfaces and handler stubs.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    parser.add_argument(
        "inputs", nargs="*", type=Path, metavar="INPUT",
        help="declaration files (default: [tool.venturi] inputs in pyproject.toml)",
    )
    parser.add_argument(
        "--check", action="store_true",
        help="write nothing; exit 1 with a diff when generated code is stale or missing",
    )
    parser.add_argument(
        "--format", choices=("text", "json", "github"), default="text",
        help="diagnostics as compiler-style text (default), one JSON document, or GitHub annotations",
    )
    parser.add_argument("--config", type=Path, metavar="PYPROJECT", help="pyproject.toml to read [tool.venturi] from")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write .venturi-cache/")
    return parser


def _schema_command(args: list[str], out: TextIO) -> int:
    parser = argparse.ArgumentParser(prog="venturi-gen schema", description="Print the declaration JSON Schema.")
    parser.add_argument("--path", action="store_true", help="print the schema file's path instead of its content")
    options = parser.parse_args(args)
    from importlib import resources

    from venturi_gen.schema_check import SCHEMA_FILE

    resource = resources.files("venturi_gen.schemas").joinpath(SCHEMA_FILE)
    out.write(f"{resource}\n" if options.path else resource.read_text("utf-8"))
    return 0


def _review_command(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="venturi-gen review",
        description="Compare the declarations with a base version (a git revision or a "
        "directory) and report what the change does to jobs: whom each change breaks (new "
        "workers reading jobs already stored, or old workers reading jobs new producers write), "
        "the way through it, and each task's safe deploy order. The report goes to stdout.",
        epilog="exit status: 0 nothing stored breaks, 1 a change breaks jobs already stored or the "
        "declarations (or the base's) have errors, 2 usage error. Rules and codes: docs/changing-tasks.md.",
    )
    parser.add_argument(
        "--against", required=True, metavar="REV_OR_DIR",
        help="the base: a git revision (main, origin/main, a commit) or a directory",
    )  # fmt: skip
    parser.add_argument(
        "--format", choices=("text", "json", "github", "markdown"), default="text",
        help="text (default), one JSON document, GitHub annotations, or Markdown for a pull-request comment",
    )  # fmt: skip
    parser.add_argument(
        "--allow-invalid-base", action="store_true",
        help="review against a base whose declarations do not validate: compare its valid files "
        "and skip the others with a warning (without it, such a base is an error)",
    )  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="PYPROJECT")
    options = parser.parse_args(args)
    from venturi_gen import config as config_module
    from venturi_gen import review_report
    from venturi_gen.diagnostics import sort_unique
    from venturi_gen.review import findings, review
    from venturi_gen.review_sources import base_version, head_version

    config = config_module.load(Path.cwd(), options.config)
    if config.pyproject is None:
        raise ConfigError("review needs [tool.venturi] inputs in pyproject.toml")
    head, errors = head_version(config, config_module.expand(config))
    if errors:  # the declarations' own errors come first: nothing is compared
        _refuse_review(options.format, sort_unique(errors), options.against, "the declarations do not validate")
        return 1
    base, notes = base_version(config, options.against, allow_invalid=options.allow_invalid_base)
    base_errors = [n for n in notes if n.severity is Severity.ERROR]
    if base_errors:
        # A broken base would report every task as added, letting any breaking change through.
        _refuse_review(options.format, sort_unique(base_errors), options.against,
                       f"the base {options.against} does not validate (--allow-invalid-base compares "
                       "its valid files and skips the others)")  # fmt: skip
        return 1
    reports = review(base, head)
    notes = sort_unique(notes)
    if options.format == "json":
        sys.stdout.write(review_report.json_document(reports, notes, options.against))
    elif options.format == "github":
        sys.stdout.write(review_report.github(reports, notes, options.against))
    elif options.format == "markdown":
        sys.stdout.write(review_report.markdown(reports, notes, options.against))
    else:
        sys.stdout.write(review_report.text(reports, notes, options.against))
    broken = any(f.diagnostic.severity is Severity.ERROR for f in findings(reports))
    return 1 if broken else 0


def _refuse_review(format: str, diagnostics: list[Diagnostic], against: str, reason: str) -> None:
    from venturi_gen import review_report

    out, err = review_report.refused(format, diagnostics, against, reason)
    sys.stdout.write(out)
    sys.stderr.write(err)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ["schema"]:
            return _schema_command(args[1:], sys.stdout)
        if args[:1] == ["review"]:
            return _review_command(args[1:])
        if args[:1] == ["docs"]:
            return _docs_command(args[1:])
        options = _parser().parse_args(args)
        return _generate(options)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    except ConfigError as exc:
        print(f"venturi-gen: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if exc.name not in _GEN_DEPENDENCIES:
            raise
        print(f"venturi-gen: error: {exc.name} is not installed; venturi-gen needs the `gen` extra: "
              "pip install 'venturi[gen]'", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("venturi-gen: interrupted; every file is either untouched or complete", file=sys.stderr)
        return 130
    except Exception:
        print("venturi-gen: internal error (please report it):", file=sys.stderr)
        traceback.print_exc()
        return 2


def _input_files(inputs: list[Path], config: Config) -> list[Path]:
    """The named declaration files, else those of ``[tool.venturi] inputs``."""
    from venturi_gen import config as config_module

    if inputs:
        files = []
        for given in inputs:
            path = (Path.cwd() / given).resolve()
            if not path.is_file():
                raise ConfigError(f"{given}: no such file")
            files.append(path)
        return files
    if config.pyproject is None:
        raise ConfigError(
            "no inputs: name declaration files, or set [tool.venturi] inputs in pyproject.toml"
        )
    return config_module.expand(config)


def _docs_command(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="venturi-gen docs",
        description="Write Markdown documentation of every declared task (kind, aliases, version, "
        "fields with types, defaults and docs, dedup, priority, queue, retry, timeout, retention) "
        "to stdout, or to --output. The output depends only on the declarations.",
        epilog="exit status: 0 ok, 1 declaration errors or (--check) an out-of-date file, 2 usage error.",
    )
    parser.add_argument("inputs", nargs="*", type=Path, metavar="INPUT",
                        help="declaration files (default: [tool.venturi] inputs in pyproject.toml)")  # fmt: skip
    parser.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the Markdown to FILE")
    parser.add_argument("--check", action="store_true",
                        help="with --output: write nothing; exit 1 when FILE is not up to date")  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="PYPROJECT")
    options = parser.parse_args(args)
    if options.check and options.output is None:
        raise ConfigError("docs --check needs --output FILE: the file to compare with")
    from venturi_gen import config as config_module
    from venturi_gen import docs, frontend, project, writer
    from venturi_gen.diagnostics import has_errors, sort_unique
    from venturi_gen.layout import display_path

    config = config_module.load(Path.cwd(), options.config)
    checked = []
    for path in _input_files(options.inputs, config):
        display = display_path(path, config.root)
        checked.append(frontend.check_file(display, path, path.read_bytes(), config.root))
    facts = [(c.display, c.facts) for c in checked]
    diagnostics = sort_unique([*(d for c in checked for d in c.diagnostics),
                               *project.check_kinds(facts), *project.check_outputs(facts)])  # fmt: skip
    if has_errors(diagnostics):
        for diagnostic in diagnostics:
            print(diagnostic.text(), file=sys.stderr)
        print(f"venturi-gen docs: {summary(diagnostics)}; nothing was written", file=sys.stderr)
        return 1
    text = docs.render([c.module for c in checked if c.module is not None])
    if options.output is None:
        sys.stdout.write(text)
        return 0
    target = Path.cwd() / options.output
    if writer.read_text(target) == text:
        return 0
    if options.check:
        print(f"venturi-gen docs: {options.output} is out of date; run `venturi-gen docs --output "
              f"{options.output}`", file=sys.stderr)  # fmt: skip
        return 1
    writer.write_atomic(target, text)
    print(f"venturi-gen docs: wrote {options.output}", file=sys.stderr)
    return 0


def _generate(options: argparse.Namespace) -> int:
    from venturi_gen import config as config_module
    from venturi_gen.pipeline import run

    config = config_module.load(Path.cwd(), options.config)
    files = _input_files(options.inputs, config)
    fix = shlex.join(["venturi-gen", *map(str, options.inputs)]) if options.inputs else "venturi-gen"
    result = run(config, files, check=options.check, use_cache=not options.no_cache)
    if options.format == "json":
        _report_json(result, options.check)
    elif options.format == "github":
        _report_github(result, fix)
    else:
        _report_text(result, options.check, fix, config.inputs if not options.inputs else ())
    return 1 if result.failed else 0


def _report_text(result: RunResult, check: bool, fix: str, patterns: tuple[str, ...]) -> None:
    from venturi_gen.check import render_report

    err = sys.stderr
    for diagnostic in result.diagnostics:
        print(diagnostic.text(), file=err)
    prefix = "venturi-gen --check" if check else "venturi-gen"
    if not result.inputs:
        print(f"{prefix}: no declaration files match {', '.join(patterns)}; nothing to do", file=err)
        return
    if result.failed and not result.stale:
        print(f"{prefix}: {summary(result.diagnostics)}; nothing was written", file=err)
        return
    if result.stale:
        sys.stdout.write(render_report(result.stale))
        sys.stdout.flush()
        names = ", ".join(printable(s.path) for s in result.stale[:5]) + (", ..." if len(result.stale) > 5 else "")
        print(f"{prefix}: {len(result.stale)} generated file(s) out of date or missing ({names}); "
              f"run `{fix}` to update them", file=err)
        return
    _listing("wrote", result.written, "", err)
    _listing("created", result.created, " (yours to edit; never overwritten)", err)
    files = len(result.inputs)
    what = f"{files} declaration file{'s' if files != 1 else ''}"
    if check:
        print(f"{prefix}: generated code is up to date ({what})", file=err)
    elif result.written or result.created:
        print(f"{prefix}: wrote {len(result.written)}, created {len(result.created)}, "
              f"{result.unchanged} unchanged ({what})", file=err)
    else:
        print(f"{prefix}: up to date ({what})", file=err)


def _listing(verb: str, paths: list[str], note: str, err: TextIO) -> None:
    """One line per file, up to a screenful: a big first run should not flood a CI log."""
    for path in paths[:_LISTED]:
        print(f"  {verb} {printable(path)}{note}", file=err)
    if len(paths) > _LISTED:
        print(f"  {verb} {len(paths) - _LISTED} more file(s)", file=err)


def _report_json(result: RunResult, check: bool) -> None:
    document = {
        "ok": not result.failed,
        "check": check,
        "inputs": result.inputs,
        "diagnostics": [d.to_json() for d in result.diagnostics],
        "written": result.written,
        "created": result.created,
        "unchanged": result.unchanged,
        "stale": [{"path": s.path, "status": s.status, "diff": s.diff} for s in result.stale],
    }
    sys.stdout.write(dumps_json(document) + "\n")


def _report_github(result: RunResult, fix: str) -> None:
    from venturi_gen.check import render_report

    out = sys.stdout
    for diagnostic in result.diagnostics:
        print(github_line(diagnostic), file=out)
    for stale in result.stale:
        message = f"{stale.path} is {'missing' if stale.status == 'missing' else 'out of date'}; run `{fix}`"
        print(github_command(Severity.ERROR, message, file=stale.path, title="venturi-gen STALE"), file=out)
    if result.stale:
        print("::group::venturi-gen --check diff", file=out)
        out.write(render_report(result.stale))
        print("::endgroup::", file=out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

