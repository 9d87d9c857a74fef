"""The client's capability table is packages/protocol's API table, as the built package says it."""

import json
import os
import subprocess
import unittest

from booblik.capabilities import FIRST_VERSION_WITH, speaks
from tests.support import NODE, REPO_ROOT

PROTOCOL = os.path.join(REPO_ROOT, "packages", "protocol", "dist", "index.js")

# Every row of the TypeScript table: apiKey -> [the capabilities of each version, lowest first].
_DUMP_TABLE = """
import(process.argv[1]).then(({ apiRows, capabilityNames }) => {
  const rows = {};
  for (const row of apiRows) {
    rows[row.apiKey] = row.versions.map((v) => capabilityNames.filter((name) => v.capabilities[name]));
  }
  console.log(JSON.stringify(rows));
});
"""


@unittest.skipUnless(NODE and os.path.exists(PROTOCOL), "needs node and the built packages/protocol")
class CapabilityTableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = subprocess.run([NODE, "-e", _DUMP_TABLE, PROTOCOL], capture_output=True, text=True, timeout=30, check=True)
        cls.table = {int(key): versions for key, versions in json.loads(out.stdout).items()}

    def test_each_capability_first_appears_at_the_version_this_client_sends_for_it(self):
        for (api_key, capability), first in FIRST_VERSION_WITH.items():
            with self.subTest(api_key=api_key, capability=capability):
                versions = self.table[api_key]
                having = [v for v, caps in enumerate(versions, start=1) if capability in caps]
                self.assertTrue(having, f"no version of apiKey {api_key} has {capability}")
                self.assertEqual(having[0], first)
                # Kept by every later version: comparing the broker's highest version is enough.
                self.assertEqual(having, list(range(first, len(versions) + 1)))

    def test_a_broker_speaks_a_capability_from_its_first_version_on(self):
        self.assertFalse(speaks({2: 2}, 2, "followsRoutes"), "the original broker's FETCH")
        self.assertTrue(speaks({2: 3}, 2, "followsRoutes"))
        self.assertFalse(speaks({}, 2, "followsRoutes"), "a broker without FETCH")


if __name__ == "__main__":
    unittest.main()
