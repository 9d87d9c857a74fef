"""What a check works with: the client under test, and the harness's own view of the broker.

Every check reads the high watermark before it acts, so no check depends on what an earlier one
left behind. Payloads carry a per-run nonce, so a record found is the record this check wrote.
"""

import os
import time

from . import wire
from .client_command import ClientCommand
from .connection import FETCH_MAX_BYTES, Connection
from .registry import CheckFailed

TOPIC = "conformance"  # 3 partitions
SINGLE = "single"  # 1 partition
PARTITION_COUNTS = {TOPIC: 3, SINGLE: 1}
ARRIVAL_TIMEOUT_S = 10.0  # how long an ack=none record may take to land before it counts as lost
LONG_POLL_MS = 2000  # one wait of the harness's own long fetch while it waits for a record


class Context:
    def __init__(self, client: ClientCommand | None, broker_address: str):
        self.client = client
        self.broker_address = broker_address
        self.nonce = os.urandom(4).hex()

    def payload(self, tag: str) -> bytes:
        return f"{tag}-{self.nonce}".encode()

    def connect(self) -> Connection:
        return Connection(self.broker_address)

    # ---- the broker as the harness sees it ----

    def partitions(self, topic: str) -> list[tuple[int, int, int]]:
        """(partition, logStartOffset, highWatermark) of every partition, sorted by id."""
        with self.connect() as conn:
            return sorted(conn.metadata(topic)[topic])

    def high_watermarks(self, topic: str) -> dict[int, int]:
        return {p: hw for p, _, hw in self.partitions(topic)}

    def high_watermark(self, topic: str, partition: int) -> int:
        return self.high_watermarks(topic)[partition]

    def write(self, topic: str, partition: int, records: list[bytes]) -> int:
        """Write records with the harness's own producer; their base offset."""
        with self.connect() as conn:
            base, _ = conn.produce(topic, partition, records, ack="written")
        return base

    def read(self, topic: str, partition: int, offset: int, count: int) -> list[bytes]:
        """Up to `count` whole records from `offset`, as they are stored now."""
        records: list[bytes] = []
        with self.connect() as conn:
            while len(records) < count:
                _, payload = conn.fetch(topic, partition, offset + len(records), FETCH_MAX_BYTES)
                got = self._split(payload, topic, partition, offset + len(records)).records
                if not got:
                    break
                records.extend(got)
        return records[:count]

    def wait_for(self, topic: str, partition: int, offset: int, count: int) -> list[bytes]:
        """Like read, but waits (long fetches, no sleeps) up to ARRIVAL_TIMEOUT_S for the records."""
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
        records: list[bytes] = []
        with self.connect() as conn:
            while len(records) < count:
                left_ms = int((deadline - time.monotonic()) * 1000)
                if left_ms <= 0:
                    break
                _, payload = conn.fetch(
                    topic, partition, offset + len(records), FETCH_MAX_BYTES,
                    max_wait_ms=min(left_ms, LONG_POLL_MS), min_bytes=1,
                )
                records.extend(self._split(payload, topic, partition, offset + len(records)).records)
        return records[:count]

    @staticmethod
    def _split(payload: bytes, topic: str, partition: int, offset: int) -> wire.Records:
        try:
            return wire.split_records(payload)
        except wire.ProtocolError as error:
            raise CheckFailed(f"the broker serves a bad record in {topic}/{partition} from offset "
                              f"{offset}: {error}") from error
