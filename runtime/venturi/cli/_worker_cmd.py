"""``venturi worker APP:FACTORY``: run the application's worker as a process.

The factory builds the Worker (handlers, shared state, configuration) in
the application's code; the command line only overrides what operators tune
per deployment. Each option given replaces the matching ``WorkerConfig``
field (``dataclasses.replace``, so the config's validation runs again);
options left out keep the factory's values. ``--database`` is exported as
``$VENTURI_DATABASE_URL`` before the application is imported, so the whole
process (a ``Queue`` the handlers use included) sees one database, and it
replaces a URL the factory passed to the Worker.

A PostgreSQL database that cannot be reached at start is an immediate
one-line error (exit 1); once running, the worker rides out outages itself.

SIGTERM or SIGINT drains the worker (stop claiming, let running handlers
finish within ``drain_timeout``, hand back the rest) and the command exits 0.
A signal that arrives while the worker is still starting (the application
being imported, the database checked) asks for the same: the worker stops as
soon as it has started, having claimed nothing, and the command exits 0; a
second one exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import signal
from types import FrameType
from typing import Any

from venturi._durations import HELP as DURATION_HELP
from venturi.cli._app import load_worker
from venturi.cli._args import (
    SubParsers,
    comma_list,
    duration,
    duration_or_zero,
    port_number,
    positive_int,
)
from venturi.cli._database import add_database_option, check_reachable, redact
from venturi.cli._errors import CliError, UsageError
from venturi.cli._logging import LEVELS, configure
from venturi.errors import ConfigurationError
from venturi.storage._url import ENV_VAR, resolve_url, url_scheme
from venturi.worker import Worker

log = logging.getLogger("venturi.cli")

#: option dest -> WorkerConfig field
_CONFIG_OPTIONS = (
    "concurrency",
    "queues",
    "claim_batch",
    "lease_duration",
    "heartbeat_interval",
    "poll_interval",
    "drain_timeout",
)


def register(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "worker",
        help="run a worker from an import path (MODULE:FACTORY)",
        description=(
            "Import MODULE, call FACTORY() to get the configured venturi.worker.Worker, apply "
            "the options below over its WorkerConfig, and run it until SIGTERM or SIGINT, "
            "which drain it gracefully (exit 0). Durations: " + DURATION_HELP + "."
        ),
    )
    parser.add_argument("app", metavar="MODULE:FACTORY", help="e.g. myapp.workers:make_worker")
    add_database_option(parser)
    tuning = parser.add_argument_group("worker configuration (default: the factory's values)")
    tuning.add_argument("--concurrency", type=positive_int, metavar="N", help="handlers at once")
    tuning.add_argument(
        "--queues", type=comma_list, metavar="A,B", help="queues to claim from (comma-separated)"
    )
    tuning.add_argument("--claim-batch", type=positive_int, metavar="N", help="jobs per claim")
    tuning.add_argument(
        "--lease-duration",
        type=duration,
        metavar="DURATION",
        help="how long a claim holds a job between heartbeats, e.g. 30s",
    )
    tuning.add_argument(
        "--heartbeat-interval",
        type=duration,
        metavar="DURATION",
        help="how often leases are extended; shorter than the lease, e.g. 10s",
    )
    tuning.add_argument(
        "--poll-interval",
        type=duration,
        metavar="DURATION",
        help="idle wait between claims, e.g. 1s",
    )
    tuning.add_argument(
        "--drain-timeout",
        type=duration_or_zero,
        metavar="DURATION",
        help="how long running handlers may finish after SIGTERM, e.g. 10s (0s: none)",
    )
    metrics = parser.add_argument_group(
        "metrics (pip install 'venturi[prometheus]')"
    )
    metrics.add_argument(
        "--prometheus-port",
        type=port_number,
        metavar="PORT",
        help="serve the worker's OpenTelemetry metrics as Prometheus text on PORT (/metrics)",
    )
    metrics.add_argument(
        "--prometheus-host",
        default="127.0.0.1",
        metavar="HOST",
        help="the address to listen on (default 127.0.0.1: this machine only)",
    )
    logs = parser.add_argument_group("logging (to stderr)")
    logs.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="json: one object per line"
    )
    logs.add_argument("--log-level", choices=LEVELS, default="info")
    parser.set_defaults(handler=run)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    found = {
        name: getattr(args, name) for name in _CONFIG_OPTIONS if getattr(args, name) is not None
    }
    if "queues" in found:
        found["queues"] = tuple(dict.fromkeys(found["queues"]))
    # The command owns the process: SIGTERM must drain the worker even if the
    # factory turned signal handling off for embedding elsewhere.
    found["install_signal_handlers"] = True
    return found


def _apply_database(worker: Worker[Any], url: str | None) -> None:
    if url is None:
        return
    current = worker.database
    if current is not None and not isinstance(current, str):
        raise UsageError(
            "the factory gave the Worker its own AsyncStorage object, which --database cannot "
            "replace; pass a URL (or nothing) to Worker() instead"
        )
    worker.database = url


class _EarlySignals:
    """SIGTERM/SIGINT outside the worker's run, while it starts and after it stopped.

    The worker's event loop handles the signals while it runs (and puts these
    handlers back when it stops). Without them, a signal during start-up or on
    the way out would kill the process by the default action (exit -15, or a
    KeyboardInterrupt traceback): an orchestrator stopping a worker that is still
    starting would see a failure. A signal before the run asks the worker to shut
    down as soon as it runs; a second one exits at once with 0 (nothing is claimed
    then). After the run the command is exiting anyway and ignores them: Python
    restores the default action while it shuts down, which a late second SIGTERM
    would meet, but it leaves an ignored signal ignored.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.received = 0
        self.worker: Worker[Any] | None = None
        for sig in self.SIGNALS:
            signal.signal(sig, self._handle)

    def ignore_from_now_on(self) -> None:
        for sig in self.SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received += 1
        if self.received > 1:
            raise SystemExit(0)
        name = signal.Signals(signum).name
        log.info(
            "%s received outside the worker's run: it stops as soon as it has started",
            name,
            extra={"event": "shutdown_requested", "signal": name},
        )
        if self.worker is not None:
            self.worker.request_shutdown()

    def attach(self, worker: Worker[Any]) -> None:
        self.worker = worker
        if self.received:
            worker.request_shutdown()


def _serve_metrics(worker: Worker[Any], port: int | None, host: str) -> Any:
    """With ``--prometheus-port``: OpenTelemetry hooks on the worker, served as Prometheus text."""
    if port is None:
        return None
    try:
        from venturi.otel import OtelHooks, serve_prometheus

        endpoint = serve_prometheus(port, host)
    except ImportError as exc:
        raise UsageError(f"--prometheus-port: {exc}") from None
    except OSError as exc:
        raise CliError(f"--prometheus-port: cannot listen on {host}:{port}: {exc}") from None
    worker.add_hooks(OtelHooks(meter_provider=endpoint.meter_provider))
    log.info(
        "serving Prometheus metrics at %s",
        endpoint.url,
        extra={"event": "metrics_endpoint", "url": endpoint.url},
    )
    return endpoint


def run(args: argparse.Namespace) -> int:
    early = _EarlySignals()
    configure(args.log_format, args.log_level)
    if args.database is not None:
        url_scheme(args.database)  # an unsupported URL is refused before the application loads
        os.environ[ENV_VAR] = args.database
    worker = load_worker(args.app)
    early.attach(worker)
    _apply_database(worker, args.database)
    overrides = _overrides(args)
    try:
        worker.config = dataclasses.replace(worker.config, **overrides)
    except ConfigurationError as exc:
        raise UsageError(f"invalid worker configuration: {exc}") from None
    database = worker.database
    if database is None or isinstance(database, str):
        check_reachable(resolve_url(database))  # a wrong URL fails now, not after 30 s of retries
    where = (
        redact(resolve_url(database))
        if database is None or isinstance(database, str)
        else f"the factory's {database.capabilities.name} storage"
    )
    log.info(
        "starting worker from %s on %s",
        args.app,
        where,
        extra={"event": "cli_start", "app": args.app, "database": where},
    )
    endpoint = _serve_metrics(worker, args.prometheus_port, args.prometheus_host)
    try:
        stats = asyncio.run(worker.run())
    finally:
        if endpoint is not None:
            endpoint.close()
    early.ignore_from_now_on()
    log.info(
        "worker exited cleanly",
        extra={"event": "cli_exit", "completed": stats.completed, "dead": stats.dead},
    )
    return 0
