import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Logger } from '@booblik/log';
import { ManualClock } from '@booblik/protocol/testing';
import { makeCertificates } from '@booblik/testkit';
import { CertificateWatch, EXPIRY_WARNING_MS, TLS_POLL_MS_DEFAULT } from './certificate-watch.js';

const DAY_MS = 86_400_000;

async function watched(t: TestContext, wallNowMs: () => number = Date.now) {
  const certs = await makeCertificates(t);
  const files = {
    cert: path.join(certs.dir, 'live.pem'),
    key: path.join(certs.dir, 'live.key'),
    ca: certs.ca,
  };
  fs.copyFileSync(certs.server.cert, files.cert);
  fs.copyFileSync(certs.server.key, files.key);
  const lines: string[] = [];
  const logger: Logger = {
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
  const clock = new ManualClock();
  const watch = new CertificateWatch(files, { logger, clock, wallNowMs });
  t.after(() => watch.close());
  /** Puts `from` in place of the live file by rename, as deploy tools do. */
  const replace = (which: 'cert' | 'key', from: string) => {
    fs.copyFileSync(from, `${files[which]}.new`);
    fs.renameSync(`${files[which]}.new`, files[which]);
  };
  return { certs, files, lines, clock, watch, replace };
}

describe('certificate watch', () => {
  it('a key that does not match the new certificate is refused with one line naming the file, the old kept', async (t) => {
    const { certs, files, lines, clock, watch, replace } = await watched(t);
    const before = watch.contextOptions.cert;
    replace('cert', certs.foreign.cert); // the key on disk is still the old certificate's
    clock.advance(TLS_POLL_MS_DEFAULT);
    clock.advance(TLS_POLL_MS_DEFAULT);
    const refusals = lines.filter((l) => l.startsWith('WARN tls: new files refused'));
    assert.deepEqual(refusals, [
      `WARN tls: new files refused, the old ones kept: booblik.tls.key.file: ${files.key} does not match the certificate in ${files.cert}`,
    ]);
    assert.equal(watch.contextOptions.cert, before, 'the old certificate is still served');
    replace('key', certs.foreign.key);
    let reloads = 0;
    watch.onReload(() => reloads++);
    clock.advance(TLS_POLL_MS_DEFAULT);
    assert.equal(reloads, 1, 'the matching pair is taken at the next look');
    assert.notEqual(watch.contextOptions.cert, before);
  });

  it('a new file that does not parse is refused, naming it, and the old one kept', async (t) => {
    const { files, lines, clock, watch } = await watched(t);
    const before = watch.contextOptions.cert;
    fs.writeFileSync(
      `${files.cert}.new`,
      '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n',
    );
    fs.renameSync(`${files.cert}.new`, files.cert);
    clock.advance(TLS_POLL_MS_DEFAULT);
    assert.ok(
      lines.includes(
        `WARN tls: new files refused, the old ones kept: booblik.tls.cert.file: ${files.cert} certificate 1 does not parse`,
      ),
      lines.join('\n'),
    );
    assert.equal(watch.contextOptions.cert, before);
  });

  it('nothing changed on disk: no reload and no line', async (t) => {
    const { lines, clock, watch } = await watched(t);
    let reloads = 0;
    watch.onReload(() => reloads++);
    const logged = lines.length;
    clock.advance(10 * TLS_POLL_MS_DEFAULT);
    assert.equal(reloads, 0);
    assert.equal(lines.length, logged);
  });

  it('warns once when 14 days or less remain, and reports the expiry', async (t) => {
    let now = Date.now();
    const { lines, clock, watch } = await watched(t, () => now);
    assert.ok(!lines.some((l) => l.includes('expires at')), 'a fresh certificate gets no warning');
    now = watch.certExpiresAtMs - EXPIRY_WARNING_MS + 1000;
    clock.advance(TLS_POLL_MS_DEFAULT);
    clock.advance(TLS_POLL_MS_DEFAULT);
    assert.equal(
      lines.filter((l) => /WARN tls: the certificate in .* expires at .* \(14 days left\)/.test(l)).length,
      1,
    );
    assert.equal(watch.certExpired, false);
    now = watch.certExpiresAtMs + DAY_MS;
    clock.advance(TLS_POLL_MS_DEFAULT);
    assert.equal(watch.certExpired, true);
    assert.equal(
      lines.filter((l) => /WARN tls: the certificate in .* expired at .*\/readyz fails/.test(l)).length,
      1,
    );
  });
});
