"""What the versions this client sends mean: for each capability of packages/protocol's API table
(packages/protocol/src/api-table/rows.ts) the client uses, by the table's names, the first version of
the API that has it. The table keeps a capability in every later version, so a broker serves one when
its highest version of the API is at least that; tests/test_capabilities.py holds this table to the
TypeScript one. Imports nothing of the package, so every module may read it."""

from __future__ import annotations

# (apiKey, capability) -> the first version with it.
FIRST_VERSION_WITH = {
    (1, "expectedOffset"): 2,  # PRODUCE: the batch lands only where the partition ends at it
    (1, "followsRoutes"): 3,  # PRODUCE: NOT_PRIMARY with the route, rather than proxied
    (2, "held"): 2,  # FETCH: maxWaitMillis and minBytes
    (2, "followsRoutes"): 3,  # FETCH
    (2, "replicaReadable"): 4,  # FETCH: an in-sync replica may answer from its copy
    (3, "routes"): 2,  # METADATA: the spec revision and a route per partition
    (3, "atRevision"): 3,  # METADATA: a minimum revision and flags
    (3, "replicaRoutes"): 4,  # METADATA: RouteV2 routes
    (5, "replicaRoutes"): 2,  # LIST: RouteV2 routes
}


def first_version_with(api_key: int, capability: str) -> int:
    """The version to send for ``capability`` of ``api_key``."""
    return FIRST_VERSION_WITH[(api_key, capability)]


def speaks(versions: dict, api_key: int, capability: str) -> bool:
    """Whether a broker whose highest versions are ``versions`` (apiKey -> version, as API_VERSIONS
    said) serves ``capability`` of ``api_key``."""
    return versions.get(api_key, 0) >= first_version_with(api_key, capability)
