import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../errors.js';
import { configKeys, envNameOf } from './keys.js';
import { loadConfig } from './load.js';
import { parseProperties } from './properties.js';

function propertiesFile(t: import('node:test').TestContext, text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-config-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'broker.properties');
  fs.writeFileSync(file, text);
  return file;
}

describe('configuration', () => {
  it('defaults: data under the working directory, port 9092, loopback, one default topic', () => {
    const { config } = loadConfig({ argv: [], env: {} });
    assert.equal(config.dataDir, 'data');
    assert.equal(config.port, 9092);
    assert.equal(config.bindAddress, '127.0.0.1');
    assert.deepEqual(config.topics, [{ name: 'default', partitions: 1 }]);
    assert.equal(config.segmentBytesMax, 512 * 1024 * 1024);
  });

  it('precedence: defaults < properties file < environment < flags', (t) => {
    const file = propertiesFile(t, 'booblik.port=1111\nbooblik.data.dir=/from/file\nbooblik.topics=f:2\n');
    const env = { BOOBLIK_PORT: '2222', BOOBLIK_TOPICS: 'e:3' };
    const { config, origins } = loadConfig({ argv: [file, '--port=3333'], env });
    assert.equal(config.port, 3333);
    assert.equal(origins['booblik.port'], 'flag --port');
    assert.deepEqual(config.topics, [{ name: 'e', partitions: 3 }]);
    assert.equal(origins['booblik.topics'], 'env BOOBLIK_TOPICS');
    assert.equal(config.dataDir, '/from/file');
    assert.equal(origins['booblik.data.dir'], `${file}:2`);
  });

  it('flags take --key=value, --key value, with or without the booblik. prefix', () => {
    const { config } = loadConfig({
      argv: ['--booblik.port=1', '--http.port', '2', '--data.dir', 'x'],
      env: {},
    });
    assert.deepEqual([config.port, config.httpPort, config.dataDir], [1, 2, 'x']);
  });

  it('every key has an environment name: upper-cased, dots to underscores', () => {
    for (const k of configKeys) {
      const env = { [envNameOf(k.key)]: k.default };
      assert.doesNotThrow(() => loadConfig({ argv: [], env }), k.key);
    }
    assert.equal(envNameOf('booblik.data.dir'), 'BOOBLIK_DATA_DIR');
  });

  it('an unknown key in the file stops startup, naming the file, line and key', (t) => {
    const file = propertiesFile(t, '# comment\nbooblik.port=1\nbooblik.prot=2\n');
    assert.throws(
      () => loadConfig({ argv: [file], env: {} }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /broker\.properties:3: unknown key "booblik\.prot"/);
        return true;
      },
    );
  });

  it('an unknown flag stops startup; a flag without a value too', () => {
    assert.throws(() => loadConfig({ argv: ['--portt=1'], env: {} }), /unknown key "portt"/);
    assert.throws(() => loadConfig({ argv: ['--port'], env: {} }), /flag --port: needs a value/);
    assert.throws(
      () => loadConfig({ argv: ['a.properties', 'stray'], env: {} }),
      /configuration file a\.properties/,
    );
  });

  it('an unknown BOOBLIK_ variable is a warning, not a failure (clients share the prefix)', () => {
    const { warnings } = loadConfig({ argv: [], env: { BOOBLIK_PROT: '1', BOOBLIK_BROKER: 'h:1' } });
    assert.deepEqual(warnings, ['environment variable BOOBLIK_PROT is not a broker setting; ignored']);
  });

  it('BOOBLIK_BOOTSTRAP_USER, which the broker does read, is not warned about as ignored', () => {
    const { warnings } = loadConfig({ argv: [], env: { BOOBLIK_BOOTSTRAP_USER: 'admin:pw' } });
    assert.deepEqual(warnings, []);
  });

  const bad: [string, string, RegExp][] = [
    ['--port=70000', 'booblik.port', /an integer 0\.\.65535/],
    ['--port=abc', 'booblik.port', /"abc"/],
    ['--port=', 'booblik.port', /""/],
    ['--topics=a:0', 'booblik.topics', /name:partitions/],
    ['--topics=bad name:1', 'booblik.topics', /name:partitions/],
    ['--topics=a:1,a:2', 'booblik.topics', /name:partitions/],
    ['--topics=a', 'booblik.topics', /name:partitions/],
    ['--segment.capacity.bytes=8', 'booblik.segment.capacity.bytes', /9\.\.2147483647/],
    ['--retention.bytes=-2', 'booblik.retention.bytes', />= -1/],
    ['--http.port=-2', 'booblik.http.port', /-1\.\.65535/],
    ['--max.connections=0', 'booblik.max.connections', />= 1/],
    ['--flush.every.millis=1.5', 'booblik.flush.every.millis', /"1\.5"/],
    ['--data.dir= ', 'booblik.data.dir', /a directory path/],
    ['--cluster.etcd=etcd1:2379', 'booblik.cluster.etcd', /http:\/\/host:port/],
    ['--cluster.etcd=http://a:1,,http://b:2', 'booblik.cluster.etcd', /separated by commas/],
    ['--cluster.name=a/b', 'booblik.cluster.name', /letters, digits/],
    ['--cluster.lease.millis=2500', 'booblik.cluster.lease.millis', /whole seconds/],
    ['--cluster.lease.millis=1000', 'booblik.cluster.lease.millis', /2000\.\.600000/],
    ['--default.replication=6', 'booblik.default.replication', /1\.\.5/],
    ['--default.replication=0', 'booblik.default.replication', /1\.\.5/],
    ['--replica.lag.max.millis=50', 'booblik.replica.lag.max.millis', /100\.\.600000/],
    ['--broker.id=-b1', 'booblik.broker.id', /a letter or digit first/],
    ['--broker.zone=eu west', 'booblik.broker.zone', /letters, digits/],
    ['--advertised.address=10.0.0.5', 'booblik.advertised.address', /host:port/],
    ['--advertised.address=h:70000', 'booblik.advertised.address', /host:port/],
    ['--cluster.peer.dial=127.0.0.1:9094', 'booblik.cluster.peer.dial', /advertised=dial pairs/],
    ['--cluster.peer.dial=h:1=h', 'booblik.cluster.peer.dial', /of host:port/],
    ['--cluster.peer.dial=h:1=p:2,h:1=q:3', 'booblik.cluster.peer.dial', /each advertised address once/],
    ['--cluster.peer.dial=h:1=p:2,,k:1=q:3', 'booblik.cluster.peer.dial', /separated by commas/],
  ];
  for (const [flag, key, allowed] of bad) {
    it(`refuses ${flag}, naming ${key} and what it allows`, () => {
      assert.throws(
        () => loadConfig({ argv: [flag], env: {} }),
        (e: unknown) => {
          assert.ok(e instanceof ConfigError);
          assert.ok(e.message.startsWith(`${key}: `), e.message);
          assert.match(e.message, allowed);
          return true;
        },
      );
    });
  }

  it('cluster keys: endpoints as a list, a lease in whole seconds, off (no etcd) by default', () => {
    assert.deepEqual(loadConfig({ argv: [], env: {} }).config.clusterEtcd, []);
    const { config } = loadConfig({
      argv: [
        '--cluster.etcd=http://e1:2379, http://e2:2379',
        '--cluster.lease.millis=3000',
        '--advertised.address=[::1]:9092',
      ],
      env: {},
    });
    assert.deepEqual(config.clusterEtcd, ['http://e1:2379', 'http://e2:2379']);
    assert.equal(config.clusterLeaseMs, 3000);
    assert.equal(config.advertisedAddress, '[::1]:9092');
  });

  it('cluster.peer.dial: advertised=dial pairs, from a flag or BOOBLIK_CLUSTER_PEER_DIAL; none by default', () => {
    assert.deepEqual(loadConfig({ argv: [], env: {} }).config.clusterPeerDial, new Map());
    const expected = new Map([
      ['127.0.0.1:9094', '127.0.0.1:40001'],
      ['[::1]:9096', 'nat.example:9096'],
    ]);
    const raw = '127.0.0.1:9094=127.0.0.1:40001, [::1]:9096 = nat.example:9096';
    assert.deepEqual(
      loadConfig({ argv: [`--cluster.peer.dial=${raw}`], env: {} }).config.clusterPeerDial,
      expected,
    );
    assert.deepEqual(
      loadConfig({ argv: [], env: { BOOBLIK_CLUSTER_PEER_DIAL: raw } }).config.clusterPeerDial,
      expected,
    );
  });

  it('a bad value from the environment names the variable it came from', () => {
    assert.throws(
      () => loadConfig({ argv: [], env: { BOOBLIK_PORT: 'x' } }),
      /booblik\.port: "x" \(from env BOOBLIK_PORT\)/,
    );
  });
});

describe('properties files', () => {
  it('reads =, : and space separators, comments, continuations and escapes', () => {
    const text = [
      '# c',
      '! c',
      'a=1',
      'b : 2',
      'c 3',
      'd = x\\',
      '   y',
      'e=\\u0041\\tz',
      '  f=  spaced  ',
    ].join('\n');
    assert.deepEqual(
      parseProperties(text).map((p) => [p.key, p.value]),
      [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
        ['d', 'xy'],
        ['e', 'A\tz'],
        ['f', 'spaced'],
      ],
    );
  });
});
