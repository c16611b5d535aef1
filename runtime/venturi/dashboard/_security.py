"""What keeps the dashboard safe: who may see it, proof that a POST came from its own
page, and the headers that keep a browser from running or framing anything else.

- **Authentication** (``Access``): none on 127.0.0.1 by default; a bearer token
  (``Authorization: Bearer``, or a cookie set by the login form), and/or a header
  that a trusted proxy sets after authenticating the user. The command refuses
  to listen on another address without one of them.
- **CSRF**: every state change is a POST whose form carries a token that is the
  HMAC, under a secret of this process, of a random cookie the browser holds
  (``SameSite=Strict``); a request that lacks either, or whose ``Origin`` is
  another site, is refused.
- **Headers**: a Content-Security-Policy that allows scripts and styles from
  the dashboard's own static files only (no inline script can run, whatever a
  stored value holds), no framing, no referrer.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_COOKIE = "venturi_csrf"
SESSION_COOKIE = "venturi_session"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    """Pure ASGI middleware: the headers above on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


@dataclass(frozen=True)
class Access:
    """Who may use the dashboard: ``token`` (bearer or login cookie), ``trusted_header``
    (a header a proxy sets for authenticated users), or anyone who can reach it (neither:
    the command allows that on a loopback address only)."""

    token: str | None = None
    trusted_header: str | None = None

    @property
    def open(self) -> bool:
        return self.token is None and self.trusted_header is None

    def session_value(self) -> str:
        """The login cookie's value: derived from the token, so a restart keeps sessions and
        a new token ends them."""
        assert self.token is not None
        return hmac.new(self.token.encode(), b"venturi-dashboard-session", hashlib.sha256).hexdigest()

    def token_matches(self, offered: str) -> bool:
        return self.token is not None and hmac.compare_digest(offered.encode(), self.token.encode())

    def allows(self, conn: HTTPConnection) -> bool:
        if self.open:
            return True
        if self.trusted_header is not None and conn.headers.get(self.trusted_header, "").strip():
            return True
        if self.token is None:
            return False
        scheme, _, offered = conn.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(offered.strip()):
            return True
        cookie = conn.cookies.get(SESSION_COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie.encode(), self.session_value().encode())


class Csrf:
    """Tokens bound to the browser's cookie under a per-process secret."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    @staticmethod
    def new_cookie() -> str:
        return secrets.token_urlsafe(32)

    def token_for(self, cookie: str) -> str:
        return hmac.new(self._secret, cookie.encode(), hashlib.sha256).hexdigest()

    def valid(self, cookie: str | None, offered: str | None) -> bool:
        if not cookie or not offered:
            return False
        return hmac.compare_digest(self.token_for(cookie).encode(), offered.encode())


def same_origin(conn: HTTPConnection) -> bool:
    """False when the browser says the request came from another site. A form posted
    under ``Referrer-Policy: no-referrer`` carries ``Origin: null``: that (or no Origin
    at all) is judged by the CSRF token and the ``SameSite=Strict`` cookie alone."""
    origin = conn.headers.get("origin")
    if not origin or origin == "null":
        return True
    return urlsplit(origin).netloc == conn.headers.get("host", "")



#: The names a dashboard without authentication answers to (``Host``): the loopback's. A
#: web page elsewhere cannot then reach it through a DNS name rebound to 127.0.0.1.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def host_allowed(conn: HTTPConnection, allowed: frozenset[str] | None) -> bool:
    if allowed is None:
        return True
    name = urlsplit("//" + conn.headers.get("host", "")).hostname or ""
    return name in allowed or (name.startswith("127.") and "127.0.0.1" in allowed)
