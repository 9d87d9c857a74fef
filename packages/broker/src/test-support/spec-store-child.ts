/**
 * Child process for the spec file's SIGKILL test: replaces the spec set of `<dataDir>` again and
 * again, each state self-describing (revision k holds topics s0..s(k+199)), printing each revision
 * once its replace has returned, until killed.
 */
import { topicSpecWithDefaults } from '@booblik/protocol';
import { FileSpecStore } from '../topics/file-spec-store.js';

const dataDir = process.argv[2]!;
const store = new FileSpecStore(dataDir);
const loaded = await store.load();
let revision = loaded?.revision ?? 0;
process.stdout.write('ready\n');
for (;;) {
  const next = revision + 1;
  const specs = Array.from({ length: next + 200 }, (_, i) =>
    topicSpecWithDefaults({
      name: `s${i}`,
      partitions: 1 + (i % 7),
      labels: { round: String(next) },
      revision: next,
    }),
  );
  await store.replace(revision, { revision: next, specs });
  revision = next;
  process.stdout.write(`${revision}\n`);
}
