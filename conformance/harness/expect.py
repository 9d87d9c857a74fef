"""Small assertions on what a client printed; each raises CheckFailed saying what was expected and
what happened."""

from .client_command import VerbResult
from .registry import CheckFailed


def done(result: VerbResult) -> None:
    """The verb was carried out: it finished in time and exited 0."""
    if result.timed_out or result.exit_code != 0:
        raise CheckFailed(f"expected exit 0; {result.describe()}")


def no_error(result: VerbResult) -> None:
    done(result)
    if result.all("error"):
        raise CheckFailed(f"expected success, got a refusal; {result.describe()}")


def refusal(result: VerbResult, code_name: str, *forbidden_keys: str) -> None:
    """The broker's refusal printed as `error=<code_name>`, exit 0, and none of `forbidden_keys`."""
    done(result)
    if result.all("error") != [code_name]:
        raise CheckFailed(f"expected error={code_name}; {result.describe()}")
    for key in forbidden_keys:
        if result.all(key):
            raise CheckFailed(f"expected no {key}= line beside the refusal; {result.describe()}")


def failed_loudly(result: VerbResult, what: str) -> None:
    """A client failure, signalled: a non-zero exit or an error= line, within the time limit."""
    if result.timed_out:
        raise CheckFailed(f"expected an error for {what}, the client hung; {result.describe()}")
    if result.exit_code == 0 and not result.all("error"):
        raise CheckFailed(f"expected an error for {what}, the client reported success; "
                          f"{result.describe()}")


def one_int(result: VerbResult, key: str) -> int:
    values = result.all(key)
    if len(values) != 1:
        raise CheckFailed(f"expected one {key}= line; {result.describe()}")
    try:
        return int(values[0])
    except ValueError:
        raise CheckFailed(f"{key}={values[0]!r} is not an integer; {result.describe()}") from None


def absent(result: VerbResult, *keys: str) -> None:
    for key in keys:
        if result.all(key):
            raise CheckFailed(f"expected no {key}= line; {result.describe()}")


def records(result: VerbResult) -> list[bytes]:
    """The `record=<hex>` lines, decoded."""
    decoded = []
    for value in result.all("record"):
        try:
            decoded.append(bytes.fromhex(value))
        except ValueError:
            raise CheckFailed(f"record={value[:40]!r} is not hex; {result.describe()}") from None
    return decoded


def show(data: bytes, limit: int = 24) -> str:
    text = data.hex()
    return f"{len(data)} bytes {text[: limit * 2]}{'...' if len(data) > limit else ''}"


def bytes_diff(expected: bytes, got: bytes) -> str:
    """Where two payloads part: the first differing byte, and both lengths."""
    for index, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return (f"expected {len(expected)} bytes, got {len(got)}; first difference at byte "
                    f"{index}: expected {a:02x}, got {b:02x}")
    return f"expected {len(expected)} bytes, got {len(got)} (one is a prefix of the other)"


def same_records(expected: list[bytes], got: list[bytes], where: str) -> None:
    if got == expected:
        return
    if len(got) != len(expected):
        raise CheckFailed(f"{where}: expected {len(expected)} records, got {len(got)} "
                          f"({', '.join(show(r, 8) for r in got[:6])})")
    for index, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            raise CheckFailed(f"{where}: record {index} differs: {bytes_diff(a, b)}")
