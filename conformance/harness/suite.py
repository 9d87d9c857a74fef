"""Runs checks and reports them: one line per check (`PASS 7 ...` or `FAIL 7 ...: <why>`), then a
tally. A client runs only the checks of the roles it declares, and a run that skips everything
fails."""

import traceback
from dataclasses import dataclass, field
from typing import Callable, Iterable

from . import broker_checks, checks, extra_checks, topic_checks  # noqa: F401  (they register the checks)
from .client_command import VERB_TIMEOUT_S, ClientCommand
from .context import Context
from .registry import BROKER_CHECKS, CLIENT_CHECKS, CONSUMER, PRODUCER, TOPICS, Check, CheckFailed

# The original contract's roles: its harness refuses a whole run whose `roles=` names anything else,
# so every role added since is declared under `extras=`, a key that harness ignores.
CONTRACT_ROLES = (PRODUCER, CONSUMER)
EXTRA_ROLES = (TOPICS,)
DETAIL_CHARS_MAX = 700  # a failure line stays one readable line


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    results: dict[str, bool] = field(default_factory=dict)  # check number -> passed

    def add(self, other: "Tally") -> None:
        self.passed += other.passed
        self.failed += other.failed

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


def one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS_MAX else text[: DETAIL_CHARS_MAX - 3] + "..."


def run_checks(selected: Iterable[Check], ctx: Context, out: Callable[[str], None]) -> Tally:
    tally = Tally()
    for item in selected:
        try:
            item.run(ctx)
        except CheckFailed as failure:
            passed, detail = False, str(failure)
        except Exception as error:  # noqa: BLE001  (a harness-side error is still this check's failure)
            where = traceback.extract_tb(error.__traceback__)[-1]
            passed = False
            detail = (f"{type(error).__name__}: {error} (at {where.filename.rsplit('/', 1)[-1]}:"
                      f"{where.lineno})")
        else:
            passed, detail = True, ""
        tally.results[item.number] = passed
        if passed:
            tally.passed += 1
            out(f"PASS {item.number} {item.title}")
        else:
            tally.failed += 1
            out(f"FAIL {item.number} {item.title}: {one_line(detail)}")
    return tally


def declared_roles(client: ClientCommand, out: Callable[[str], None]) -> list[str] | None:
    """The roles from `capabilities` (`roles=` and `extras=`), or None (reported) when the verb
    failed or `roles=` holds a role the original contract does not know."""
    result = client.run("capabilities")
    if result.timed_out or result.exit_code != 0:
        out(f"FAIL capabilities: {one_line(result.describe())}")
        return None
    roles = _listed(result.all("roles"))
    extras = _listed(result.all("extras"))
    names = result.all("name")
    out(f"client {names[0] if names else '(no name printed)'}, roles {','.join(roles) or '(none)'}"
        f", extras {','.join(extras) or '(none)'}")
    beyond = [r for r in roles if r not in CONTRACT_ROLES]
    if beyond:
        out(f"FAIL capabilities: roles= holds {', '.join(beyond)}, beyond {','.join(CONTRACT_ROLES)}: the"
            " original harness refuses such a run; declare added roles under extras=")
        return None
    unknown = [r for r in extras if r not in EXTRA_ROLES]
    if unknown:
        out(f"note: unknown extras ignored: {', '.join(unknown)}")
    return roles + [r for r in extras if r in EXTRA_ROLES]


def _listed(values: list[str]) -> list[str]:
    return [r.strip() for value in values for r in value.split(",") if r.strip()]


def run_client(
    argv: list[str],
    broker_address: str,
    out: Callable[[str], None] = print,
    *,
    cwd: str | None = None,
    verb_timeout_s: float = VERB_TIMEOUT_S,
    only: set[str] | None = None,
) -> Tally:
    """Every check of the client's declared roles (or the `only` ones among them)."""
    client = ClientCommand(argv, broker_address, cwd, verb_timeout_s)
    roles = declared_roles(client, out)
    if roles is None:
        return Tally(failed=1)
    selected, skipped = [], []
    for item in CLIENT_CHECKS:
        if only is not None and item.number not in only:
            continue
        (selected if item.role in roles else skipped).append(item)
    for item in skipped:
        out(f"SKIP {item.number} {item.title} (role {item.role} not declared)")
    if not selected:
        out("FAIL no check ran: the client declared no role with checks to run")
        return Tally(failed=1)
    return run_checks(selected, Context(client, broker_address), out)


def run_broker(
    broker_address: str, out: Callable[[str], None] = print, only: set[str] | None = None
) -> Tally:
    selected = [c for c in BROKER_CHECKS if only is None or c.number in only]
    return run_checks(selected, Context(None, broker_address), out)
