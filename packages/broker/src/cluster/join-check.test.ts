import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { makeCertificates } from '@booblik/testkit';
import { joinProblem, ownCertificateProblem, type ProbeOutcome } from './join-check.js';

const verified: ProbeOutcome = { kind: 'verified' };
const refused: ProbeOutcome = { kind: 'unverified', reason: 'self-signed certificate in certificate chain' };
const down: ProbeOutcome = { kind: 'unreachable', reason: 'connect ECONNREFUSED 127.0.0.1:1' };

describe('join check: whom the members decide for', () => {
  it('no member yet, or none reachable: nothing to judge by, the broker joins', () => {
    assert.equal(joinProblem([]), null);
    assert.equal(joinProblem([{ id: 'b1', outcome: down }]), null);
  });

  it('every member that answered failed to verify: refused, naming each and why', () => {
    const problem = joinProblem([
      { id: 'b1', outcome: refused },
      { id: 'b2', outcome: down },
      { id: 'b3', outcome: refused },
    ]);
    assert.match(problem ?? '', /^no member's TLS handshake verified \(b1: self-signed.*; b3: self-signed/);
    assert.doesNotMatch(problem ?? '', /b2/);
  });

  it('one member verified: a refusal elsewhere is that member’s problem, the broker joins', () => {
    assert.equal(
      joinProblem([
        { id: 'b1', outcome: refused },
        { id: 'b2', outcome: verified },
      ]),
      null,
    );
  });
});

describe('join check: its own certificate against the CA file', () => {
  let certs: Awaited<ReturnType<typeof makeCertificates>>;
  const cleanups: (() => unknown)[] = [];
  before(async () => {
    certs = await makeCertificates({ after: (f) => void cleanups.push(f as () => unknown) });
  });
  after(async () => {
    for (const f of cleanups) await f();
  });
  const read = (file: string) => fs.readFileSync(file);

  it('a certificate the CA signed passes; one of another CA is named with its issuer', () => {
    assert.equal(ownCertificateProblem({ cert: read(certs.server.cert), ca: read(certs.ca) }), null);
    assert.equal(ownCertificateProblem({ cert: read(certs.foreign.cert), ca: read(certs.otherCa) }), null);
    assert.match(
      ownCertificateProblem({ cert: read(certs.foreign.cert), ca: read(certs.ca) }) ?? '',
      /CN=booblik foreign, issued by CN=booblik other CA\) is not signed by a CA of booblik.tls.ca.file/,
    );
  });

  it('a CA file of several CAs passes when any of them signed it', () => {
    const both = Buffer.concat([read(certs.otherCa), read(certs.ca)]);
    assert.equal(ownCertificateProblem({ cert: read(certs.server.cert), ca: both }), null);
  });

  it('files without a certificate are named, not thrown', () => {
    assert.match(ownCertificateProblem({ cert: read(certs.server.cert), ca: '' }) ?? '', /ca.file holds no/);
    assert.match(ownCertificateProblem({ cert: '', ca: read(certs.ca) }) ?? '', /certificate file holds no/);
  });
});
