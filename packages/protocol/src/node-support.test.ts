import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import nodeSupport from '@booblik/protocol/node-support';

const repoRoot = new URL('../../../', import.meta.url).pathname;
const readJson = (file: string) => JSON.parse(fs.readFileSync(`${repoRoot}${file}`, 'utf8'));
const today = new Date('2026-12-01T00:00:00Z');

describe('node support', () => {
  it('a Node older than 20 is refused, naming every supported version and the recommended one', () => {
    for (const version of ['18.20.8', '16.20.2', '14.21.3', '0.10.48']) {
      const s = nodeSupport.nodeSupport(version, today);
      assert.equal(
        s.refusal,
        `Node.js ${version} is not supported: booblik runs on Node.js 20, 22, 24 and 26 (24 recommended)`,
      );
      assert.equal(s.warning, undefined);
    }
  });

  it('Node 20 after its end of life (2026-04-30) runs with a warning saying so; before it, with none', () => {
    const after = nodeSupport.nodeSupport('20.20.2', today);
    assert.equal(after.refusal, undefined);
    assert.equal(
      after.warning,
      'Node.js 20.20.2 is past its end of life (2026-04-30) and gets no more security fixes: ' +
        'booblik runs on Node.js 20, 22, 24 and 26 (24 recommended)',
    );
    assert.deepEqual(nodeSupport.nodeSupport('20.20.2', new Date('2026-04-30T12:00:00Z')), {
      supported: [20, 22, 24, 26],
      recommended: 24,
    });
  });

  it('Node 22, 24 and 26 run with no warning until their own end of life', () => {
    for (const version of ['22.23.5', '24.22.3', '26.12.1']) {
      const s = nodeSupport.nodeSupport(version, today);
      assert.equal(s.refusal, undefined, version);
      assert.equal(s.warning, undefined, version);
    }
    assert.match(nodeSupport.nodeSupport('22.23.5', new Date('2027-05-01'))?.warning ?? '', /end of life/);
  });

  it('a line nobody tested (odd, or newer than 26) runs with a warning naming the tested ones', () => {
    for (const version of ['21.7.3', '25.0.0', '28.1.0']) {
      assert.equal(
        nodeSupport.nodeSupport(version, today).warning,
        `Node.js ${version} is not a version booblik is tested on: booblik runs on Node.js 20, 22, 24 and 26 (24 recommended)`,
      );
    }
  });

  it('every package.json of the workspace names the same versions, each with an end of life and a pinned release', () => {
    const root = readJson('package.json');
    const files = [
      'package.json',
      ...root.workspaces.map((w: string) => `${w}/package.json`),
      ...fs.readdirSync(`${repoRoot}packages`).map((p) => `packages/${p}/package.json`),
    ];
    for (const file of files) assert.equal(readJson(file).engines?.node, root.engines.node, file);
    const pins = readJson('scripts/node-versions.json');
    assert.deepEqual(
      Object.keys(pins.supported).map(Number),
      [...nodeSupport.supportedMajors],
      'scripts/node-versions.json pins one release of each supported major',
    );
    for (const [major, pin] of Object.entries(pins.supported) as [string, { version: string }][]) {
      assert.equal(pin.version.split('.')[0], major);
      assert.ok(nodeSupport.endOfLife[Number(major)], `an end of life for ${major}`);
    }
    for (const pin of Object.values(pins.refused) as { version: string }[]) {
      assert.ok(nodeSupport.nodeSupport(pin.version, today).refusal, `${pin.version} is refused`);
    }
  });
});
