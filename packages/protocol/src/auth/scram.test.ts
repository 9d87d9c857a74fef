import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkServerFinal,
  clientFinal,
  clientFirst,
  parseClientFirst,
  ScramError,
  scramCredential,
  serverFirst,
  verifyClientFinal,
} from './scram.js';

// RFC 7677, section 3.
const rfc = {
  user: 'user',
  password: 'pencil',
  clientNonce: 'rOprNGfwEbeRWgbNEkqO',
  serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
  salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
  iterations: 4096,
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal:
    'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};

describe('SCRAM-SHA-256', () => {
  it('the client side computes RFC 7677 vector messages, and accepts its server signature', () => {
    const first = clientFirst(rfc.user, rfc.clientNonce);
    assert.equal(first.message, 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const final = clientFinal(first, rfc.serverFirst, rfc.password);
    assert.equal(final.message, rfc.clientFinal);
    checkServerFinal(final, rfc.serverFinal);
  });

  it('the broker side, holding only the derived keys, verifies the vector and answers its server-final', () => {
    const credential = scramCredential(rfc.password, rfc.salt, rfc.iterations);
    const first = parseClientFirst('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const sent = serverFirst(credential, first.nonce, rfc.serverNonce);
    assert.equal(sent, rfc.serverFirst);
    assert.equal(verifyClientFinal(credential, first, sent, rfc.clientFinal), rfc.serverFinal);
  });

  it('a wrong password is refused by the broker', () => {
    const credential = scramCredential(rfc.password, rfc.salt, rfc.iterations);
    const first = clientFirst('user');
    const parsed = parseClientFirst(first.message);
    const sent = serverFirst(credential, parsed.nonce);
    const final = clientFinal(first, sent, 'pencil2');
    assert.throws(() => verifyClientFinal(credential, parsed, sent, final.message), ScramError);
  });

  it('a broker that cannot sign (another key) is refused by the client', () => {
    const final = clientFinal(clientFirst(rfc.user, rfc.clientNonce), rfc.serverFirst, rfc.password);
    assert.throws(
      () => checkServerFinal(final, 'v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
      /could not prove it holds the user/,
    );
  });

  it("a server nonce that does not extend the client's is refused by the client", () => {
    const first = clientFirst(rfc.user, 'abc');
    assert.throws(() => clientFinal(first, 'r=xyzdef,s=AAAA,i=4096', 'p'), /does not extend/);
    assert.throws(() => clientFinal(first, 'r=abc,s=AAAA,i=4096', 'p'), /does not extend/);
  });

  it('a client-final of another exchange (its nonce) is refused by the broker', () => {
    const credential = scramCredential(rfc.password, rfc.salt, rfc.iterations);
    const first = parseClientFirst('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const sent = serverFirst(credential, first.nonce, 'another');
    assert.throws(
      () => verifyClientFinal(credential, first, sent, rfc.clientFinal),
      /not the one of this exchange/,
    );
  });

  it('names escape "," and "=", and an authzid or channel binding is refused', () => {
    assert.equal(parseClientFirst(clientFirst('a,b=c').message).user, 'a,b=c');
    assert.throws(() => parseClientFirst('n,admin,n=u,r=x'), /authorization identity/);
    assert.throws(() => parseClientFirst('p=tls-unique,,n=u,r=x'), /channel binding/);
    assert.throws(() => parseClientFirst('n,,n=u'), /no r=/);
  });
});
