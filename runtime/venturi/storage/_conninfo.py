"""PostgreSQL connection strings as libpq reads them, with venturi's own parameter taken out.

libpq accepts two forms: URLs (``postgresql://user@host:5432/db?sslmode=require``,
``postgresql:///db?host=/var/run/postgresql``) and keyword/value strings
(``host=db.internal dbname=app user=svc``). venturi adds one parameter of its
own, ``venturi_schema``, which libpq would refuse. It is cut out of the text
as written, everything else left byte for byte: rebuilding a URL with
``urlunsplit`` collapses an empty host (``postgresql:///db`` becomes
``postgresql:/db``, which libpq then reads as a keyword string).

Pure string work: this module imports no driver, so that choosing a backend
from a URL costs a SQLite user nothing.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from venturi.errors import ConfigurationError

URL_PREFIXES = ("postgresql://", "postgres://")

#: libpq's connection keywords (PostgreSQL 17), so that a keyword/value string is recognised
#: as PostgreSQL's rather than taken for a SQLite file name.
LIBPQ_KEYWORDS = frozenset(
    {
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth",
        "channel_binding", "connect_timeout", "client_encoding", "options", "application_name",
        "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
        "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslpassword",
        "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer",
        "ssl_min_protocol_version", "ssl_max_protocol_version", "krbsrvname", "gsslib",
        "gssdelegation", "service", "target_session_attrs", "load_balance_hosts",
    }
)  # fmt: skip

_KEYWORD_START = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")


def is_postgres(dsn: str) -> bool:
    """A ``postgresql://`` URL, or a keyword/value string whose first keyword is libpq's."""
    if dsn.startswith(URL_PREFIXES):
        return True
    match = _KEYWORD_START.match(dsn)
    return match is not None and match.group(1) in LIBPQ_KEYWORDS


def take_param(dsn: str, name: str) -> tuple[str, list[str]]:
    """``dsn`` without the parameter ``name``, and the values it had (in order)."""
    if dsn.startswith(URL_PREFIXES):
        return _take_from_url(dsn, name)
    return _take_from_keywords(dsn, name)


def _take_from_url(url: str, name: str) -> tuple[str, list[str]]:
    base, sep, rest = url.partition("?")
    if not sep:
        return url, []
    query, hash_sep, fragment = rest.partition("#")
    kept: list[str] = []
    values: list[str] = []
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        if unquote(key) == name:
            values.append(unquote(value))
        elif pair:
            kept.append(pair)
    text = base + ("?" + "&".join(kept) if kept else "")
    return text + (hash_sep + fragment if hash_sep else ""), values


def _take_from_keywords(dsn: str, name: str) -> tuple[str, list[str]]:
    """Split a keyword/value string the way libpq does (``conninfo_parse``): ``key = value``,
    a value either bare (up to white space, backslash escapes) or single-quoted."""
    kept: list[str] = []
    values: list[str] = []
    i, n = 0, len(dsn)
    while True:
        while i < n and dsn[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        match = _KEYWORD_START.match(dsn, i)
        if match is None:
            raise ConfigurationError(
                f"invalid PostgreSQL connection string near {dsn[start:start + 20]!r}: "
                "expected keyword=value pairs (host=... dbname=...) or a postgresql:// URL"
            )
        key = match.group(1)
        i = match.end()
        while i < n and dsn[i].isspace():
            i += 1
        value, i = _value(dsn, i)
        if key == name:
            values.append(value)
        else:
            kept.append(dsn[start:i].strip())
    return " ".join(kept), values


def _value(dsn: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    n = len(dsn)
    if i < n and dsn[i] == "'":
        i += 1
        while i < n and dsn[i] != "'":
            if dsn[i] == "\\" and i + 1 < n:
                i += 1
            out.append(dsn[i])
            i += 1
        if i >= n:
            raise ConfigurationError("invalid PostgreSQL connection string: unterminated quote")
        return "".join(out), i + 1
    while i < n and not dsn[i].isspace():
        if dsn[i] == "\\" and i + 1 < n:
            i += 1
        out.append(dsn[i])
        i += 1
    return "".join(out), i
