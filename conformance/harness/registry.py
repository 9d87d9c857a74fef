"""Where checks are declared: a number, the role it belongs to, a title that says what must hold,
and a function that raises CheckFailed with what was expected and what happened."""

from dataclasses import dataclass
from typing import Callable

PRODUCER = "producer"
CONSUMER = "consumer"
TOPICS = "topics"  # APPLY and LIST: create, list by label, refuse a stale revision, delete
BROKER = "broker"  # checks of the broker itself, made with the harness's own wire client


class CheckFailed(Exception):
    """What was expected and what happened, in one line."""


@dataclass(frozen=True)
class Check:
    number: str
    role: str
    title: str
    run: Callable


CLIENT_CHECKS: list[Check] = []
BROKER_CHECKS: list[Check] = []


def check(number, role: str, title: str):
    def register(fn):
        target = BROKER_CHECKS if role == BROKER else CLIENT_CHECKS
        if any(c.number == str(number) for c in target):
            raise ValueError(f"check {number} declared twice")
        target.append(Check(str(number), role, title, fn))
        return fn

    return register
