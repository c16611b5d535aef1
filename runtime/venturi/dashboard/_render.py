"""The Jinja2 environment of the dashboard: templates from the package, autoescape on.

Autoescaping is on for every template (they are all HTML): whatever a stored
value holds is inserted as text. The filters of ``_text`` make the rest of it
visible and safe to encode.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from venturi.dashboard import _text


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("venturi.dashboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,  # a misspelt name in a template is an error, not a blank
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        line=_text.line, block=_text.block, pretty=_text.pretty, when=_text.when,
        when_ms=_text.when_ms, url=_text.url,
    )  # fmt: skip
    functions: dict[str, Any] = {"age": _text.age, "count": _text.count}
    env.globals.update(functions)
    return env


class Renderer:
    """Renders a page or fragment with what every page needs (base path, CSRF token, mode)."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def page(
        self, request: Request, name: str, context: dict[str, Any], *, status: int = 200
    ) -> HTMLResponse:
        template = self.env.get_template(name)
        state = request.state
        body = template.render(
            base=request.scope.get("root_path", "").rstrip("/"),
            csrf=getattr(state, "csrf_token", ""),
            read_only=getattr(state, "read_only", True),
            path=request.url.path,
            **context,
        )
        # Every stored value is escaped by the filters; this is the net under them: a lone
        # surrogate that reached the page some other way is written escaped, not raised.
        return HTMLResponse(body.encode("utf-8", "backslashreplace"), status_code=status)
