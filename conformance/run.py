#!/usr/bin/env python3
"""Run the conformance kit: start a broker, check it, run every registered client through the
harness, stop the broker. One section per client; the last line is `N passed, M failed`.

    python3 conformance/run.py                      every client in conformance/clients/
    python3 conformance/run.py go python            only these clients
    python3 conformance/run.py --client "CMD ARGS"  one arbitrary client command
    python3 conformance/run.py --broker HOST:PORT   use a running broker instead of starting one
"""

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from harness import suite  # noqa: E402
from harness.broker_process import BrokerError, BrokerProcess  # noqa: E402
from harness.client_command import VERB_TIMEOUT_S  # noqa: E402

CLIENTS_DIR = HERE / "clients"


def registered_clients(clients_dir: Path) -> list[tuple[str, list[str]]]:
    """Every executable file in the clients directory: (name, argv)."""
    if not clients_dir.is_dir():
        return []
    return [
        (entry.name, [str(entry)])
        for entry in sorted(clients_dir.iterdir())
        if entry.is_file() and not entry.name.startswith(".") and os.access(entry, os.X_OK)
    ]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="registered clients to run (default: all)")
    parser.add_argument("--client", action="append", default=[], metavar="COMMAND",
                        help="run this client command (split like a shell line); repeatable")
    parser.add_argument("--broker", metavar="HOST:PORT",
                        help="use this running broker; the runner then starts nothing")
    parser.add_argument("--only", metavar="N,N,...",
                        help="run only these checks (numbers, B1..); for debugging a failure")
    parser.add_argument("--verb-timeout", type=float, default=VERB_TIMEOUT_S, metavar="SECONDS",
                        help=f"time limit of each client verb (default {VERB_TIMEOUT_S:.0f})")
    parser.add_argument("--broker-log", type=Path, metavar="FILE",
                        help="append the started broker's output to this file")
    parser.add_argument("--clients-dir", type=Path, default=CLIENTS_DIR, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def pick_clients(args) -> tuple[list[tuple[str, list[str]]], str | None]:
    """The clients to run, or an error message."""
    registered = registered_clients(args.clients_dir)
    chosen = []
    if args.names:
        by_name = dict(registered)
        missing = [n for n in args.names if n not in by_name]
        if missing:
            known = ", ".join(by_name) or "none"
            return [], f"no registered client named {', '.join(missing)} (registered: {known})"
        chosen = [(n, by_name[n]) for n in args.names]
    for command in args.client:
        chosen.append((command, shlex.split(command)))
    if not args.names and not args.client:
        chosen = registered
    if not chosen:
        return [], f"no client registered in {args.clients_dir} (an executable file per client)"
    return chosen, None


def run_all(address: str, clients, args, out, broker: BrokerProcess | None = None) -> suite.Tally:
    only = set(args.only.split(",")) if args.only else None
    total = suite.Tally()
    out(f"== broker {address} ==")
    tally = suite.run_broker(address, out, only)
    out(f"broker: {tally.summary()}")
    total.add(tally)
    for name, argv in clients:
        out("")
        out(f"== {name} ==")
        if broker is not None and not broker.alive():
            out(f"FAIL the broker is gone (exit {broker.proc.returncode}); nothing to check against")
            total.failed += 1
            continue
        # From the caller's directory, so a --client command line means what it says there.
        tally = suite.run_client(argv, address, out, verb_timeout_s=args.verb_timeout, only=only)
        out(f"{name}: {tally.summary()}")
        total.add(tally)
    return total


def main(argv=None, out=None, broker_command: list[str] | None = None) -> int:
    """`broker_command` replaces the broker's start command (the self-tests use a fake one)."""
    out = out or (lambda line: print(line, flush=True))
    args = parse_args(argv)
    clients, problem = pick_clients(args)
    if problem:
        out(problem)
        out("0 passed, 1 failed")
        return 1

    broker = None
    address = args.broker
    if address is None:
        try:
            if broker_command is None:
                broker = BrokerProcess.for_repo(REPO_ROOT, args.broker_log)
            else:
                broker = BrokerProcess(broker_command, REPO_ROOT, args.broker_log)
            address = broker.start()
        except BrokerError as error:
            out(f"cannot start the broker: {error}")
            out("0 passed, 1 failed")
            return 1
    # SIGTERM (a CI timeout, say) unwinds through `finally`, so the broker is stopped too.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        total = run_all(address, clients, args, out, broker)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if broker is not None:
            code = broker.stop()
            if code not in (0, None):
                out(f"note: the broker exited with {code} on SIGTERM")
    out("")
    out(total.summary())
    return 0 if total.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
