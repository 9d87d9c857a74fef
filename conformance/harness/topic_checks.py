"""Checks 25-28, of the `topics` role: APPLY and LIST (docs/protocol.md, "Additions after v1").

The client applies and lists; the harness looks from the outside with its own codec
(harness/topics_wire.py): what the client created is in the harness's LIST and METADATA, what it
lists is what the harness created, a stale revision changed nothing. Topic names and label values
carry the run's nonce, and every check deletes what it created, so checks neither see each other's
topics nor leave any behind.
"""

from contextlib import contextmanager

from . import expect, topics_wire
from .client_command import VerbResult
from .connection import BrokerRefusal
from .context import Context
from .registry import TOPICS, CheckFailed, check


def topic_name(ctx: Context, tag: str) -> str:
    return f"conf-{ctx.nonce}-{tag}"


def labels_arg(labels: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "-"


@contextmanager
def cleaned_up(ctx: Context, *names: str):
    """Deletes the topics before (a rerun with the same nonce is unlikely, but cheap to rule out)
    and after the check, whatever its outcome."""

    def delete_all():
        with ctx.connect() as conn:
            conn.apply_topics(*(topics_wire.delete(n, topics_wire.ANY_REVISION) for n in names))

    delete_all()
    try:
        yield
    finally:
        delete_all()


def listed(ctx: Context, name: str) -> list:
    """What the harness's own LIST says of one topic: [] or [Listed]."""
    with ctx.connect() as conn:
        _, topics = conn.list_topics(f"name={name}")
    return topics


def create(ctx: Context, name: str, partitions: int, labels: dict,
           expected: int = topics_wire.MUST_NOT_EXIST) -> int:
    with ctx.connect() as conn:
        return conn.apply_topics(topics_wire.upsert(name, partitions, labels, expected))


def printed_topics(result: VerbResult) -> list[str]:
    """The `topic=<name> <partitions> <revision> <labels>` lines, as printed."""
    return [" ".join(line.split()) for line in result.all("topic")]


def topic_line(t: topics_wire.Listed) -> str:
    return f"{t.name} {t.partitions} {t.revision} {labels_arg(t.labels)}"


@check(25, TOPICS, "a topic created with expected revision 0 exists as asked, and a second create is refused")
def create_with_revision_zero(ctx: Context):
    name = topic_name(ctx, "created")
    labels = {"run": ctx.nonce, "check": "25"}
    with cleaned_up(ctx, name):
        result = ctx.client.run("topics-apply", name, "2", labels_arg(labels), "0")
        expect.no_error(result)
        revision = expect.one_int(result, "revision")
        found = listed(ctx, name)
        if [(t.partitions, t.labels, t.revision) for t in found] != [(2, labels, revision)]:
            raise CheckFailed(f"expected {name} with 2 partitions, labels {labels} at the printed revision "
                              f"{revision}; the broker lists {found}; {result.describe()}")
        with ctx.connect() as conn:
            partitions = [p for p, _, _ in conn.metadata(name)[name]]
        if partitions != [0, 1]:
            raise CheckFailed(f"METADATA of {name}: partitions {partitions}, expected [0, 1]")
        again = ctx.client.run("topics-apply", name, "2", labels_arg(labels), "0")
        expect.refusal(again, "REVISION_MISMATCH", "revision")


@check(26, TOPICS, "topics-list prints exactly the topics a label selector matches, sorted, "
                   "with their revisions")
def list_by_selector(ctx: Context):
    a, b, c = (topic_name(ctx, tag) for tag in ("list-a", "list-b", "list-c"))
    with cleaned_up(ctx, a, b, c):
        with ctx.connect() as conn:
            revision = conn.apply_topics(
                topics_wire.upsert(b, 2, {"run": ctx.nonce, "tier": "b"}, topics_wire.MUST_NOT_EXIST),
                topics_wire.upsert(a, 1, {"run": ctx.nonce, "tier": "a"}, topics_wire.MUST_NOT_EXIST),
                topics_wire.upsert(c, 1, {"other": ctx.nonce}, topics_wire.MUST_NOT_EXIST),
            )
            _, everything = conn.list_topics("")
        ours = {t.name: t for t in everything if t.name in (a, b, c)}
        for selector, want in (
            (f"run={ctx.nonce},tier=a", [a]),
            (f"run={ctx.nonce}", [a, b]),
            (f"!run,other={ctx.nonce}", [c]),
        ):
            result = ctx.client.run("topics-list", selector)
            expect.no_error(result)
            expected = [topic_line(ours[n]) for n in want]
            if printed_topics(result) != expected:
                raise CheckFailed(f"selector {selector!r}: expected topic lines {expected}; "
                                  f"{result.describe()}")
            if expect.one_int(result, "revision") != revision:
                raise CheckFailed(f"selector {selector!r}: expected revision={revision}, the store's; "
                                  f"{result.describe()}")


@check(27, TOPICS, "a stale expected revision is refused with REVISION_MISMATCH naming both "
                   "revisions, and changes nothing")
def stale_revision_refused(ctx: Context):
    name = topic_name(ctx, "stale")
    with cleaned_up(ctx, name):
        first = create(ctx, name, 1, {"run": ctx.nonce})
        second = create(ctx, name, 2, {"run": ctx.nonce}, expected=first)
        result = ctx.client.run("topics-apply", name, "3", "-", str(first))
        expect.refusal(result, "REVISION_MISMATCH", "revision")
        printed = {key: result.all(key) for key in ("topic", "expectedRevision", "actualRevision")}
        want = {"topic": [name], "expectedRevision": [str(first)], "actualRevision": [str(second)]}
        if printed != want:
            raise CheckFailed(f"expected the refusal's details {want}; {result.describe()}")
        found = listed(ctx, name)
        if [(t.partitions, t.revision) for t in found] != [(2, second)]:
            raise CheckFailed(f"a refused change changed the topic: expected 2 partitions at "
                              f"revision {second}, "
                              f"the broker lists {found}")


@check(28, TOPICS, "topics-delete removes a topic at its revision, and refuses a stale one "
                   "leaving it in place")
def delete_at_revision(ctx: Context):
    name = topic_name(ctx, "deleted")
    with cleaned_up(ctx, name):
        revision = create(ctx, name, 1, {"run": ctx.nonce})
        stale = ctx.client.run("topics-delete", name, str(revision + 1))
        expect.refusal(stale, "REVISION_MISMATCH", "revision")
        if not listed(ctx, name):
            raise CheckFailed(f"a delete expecting revision {revision + 1} removed {name} (at {revision}); "
                              f"{stale.describe()}")
        result = ctx.client.run("topics-delete", name, str(revision))
        expect.no_error(result)
        if expect.one_int(result, "revision") <= revision:
            raise CheckFailed(f"expected a revision after {revision}; {result.describe()}")
        if listed(ctx, name):
            raise CheckFailed(f"{name} is still listed after the delete; {result.describe()}")
        try:
            with ctx.connect() as conn:
                conn.metadata(name)
        except BrokerRefusal as refusal:
            if refusal.name != "UNKNOWN_TOPIC_OR_PARTITION":
                raise CheckFailed(f"METADATA of the deleted {name}: {refusal.name}") from None
        else:
            raise CheckFailed(f"METADATA still answers for the deleted {name}")
