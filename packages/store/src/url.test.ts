import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreUrlError } from './errors.js';
import { type FileLocation, parseStoreUrl, type S3Location } from './url.js';

const fileUrl = (text: string) => parseStoreUrl(text) as FileLocation;
const s3Url = (text: string) => parseStoreUrl(text) as S3Location;

const GOOD_S3 =
  's3://my-bucket/topics/orders?endpoint=http://127.0.0.1:7070&region=eu-west-1&forcePathStyle=true';

/** Asserts `text` is refused with an error naming `field` and matching `detail`. */
function refused(text: string, field: string, detail: RegExp): void {
  assert.throws(
    () => parseStoreUrl(text),
    (error: unknown) => {
      assert.ok(error instanceof StoreUrlError, `${text}: got ${error}`);
      assert.equal(error.field, field, `${text}: ${error.message}`);
      assert.match(error.message, detail);
      assert.ok(error.message.includes(JSON.stringify(text)), 'the message quotes the URL');
      return true;
    },
  );
}

describe('store URLs', () => {
  it('file:///path names a directory; a trailing slash and localhost are the same store', () => {
    assert.deepEqual(parseStoreUrl('file:///srv/booblik'), {
      kind: 'file',
      url: 'file:///srv/booblik',
      root: '/srv/booblik',
    });
    assert.equal(parseStoreUrl('file://localhost/srv/booblik/').url, 'file:///srv/booblik');
    assert.equal(fileUrl('file:///srv/with%20space').root, '/srv/with space');
  });

  it('s3:// with every option parses each into its field, and normalizes the prefix', () => {
    assert.deepEqual(parseStoreUrl(GOOD_S3), {
      kind: 's3',
      url: 's3://my-bucket/topics/orders/?endpoint=http://127.0.0.1:7070&region=eu-west-1&forcePathStyle=true',
      bucket: 'my-bucket',
      prefix: 'topics/orders/',
      endpoint: 'http://127.0.0.1:7070',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    assert.deepEqual(parseStoreUrl('s3://bucket.with.dots'), {
      kind: 's3',
      url: 's3://bucket.with.dots/',
      bucket: 'bucket.with.dots',
      prefix: '',
    });
    assert.equal(s3Url('s3://b12/p/').prefix, 'p/');
    assert.equal(s3Url(GOOD_S3.replace('true', 'false')).forcePathStyle, false);
  });

  it('the normalized URL parses back to the same location', () => {
    for (const text of [GOOD_S3, 's3://abc', 'file:///a/b', 's3://abc/x/y/?region=us-east-1']) {
      const location = parseStoreUrl(text);
      assert.deepEqual(parseStoreUrl(location.url), location);
    }
  });

  it('one field broken at a time: each refusal names that field', () => {
    refused('', 'url', /empty/);
    refused('not a url', 'url', /not a URL/);
    refused('gs://bucket/p', 'scheme', /"gs:" not supported, expected file: or s3:/);
    refused('file://otherhost/srv', 'host', /"otherhost" not supported/);
    refused('file:///srv?sync=1', 'query', /file:\/\/ takes no options/);
    refused('file:///srv#x', 'fragment', /not allowed/);
    refused('s3:///prefix', 'bucket', /missing/);
    refused('s3://ab/p', 'bucket', /"ab" is not a bucket name/);
    refused('s3://My_Bucket/p', 'bucket', /is not a bucket name/);
    refused('s3://-bucket/p', 'bucket', /is not a bucket name/);
    refused('s3://a..b/p', 'bucket', /is not a bucket name/);
    refused('s3://bucket:9000/p', 'bucket', /has a port; put the server in \?endpoint=/);
    refused('s3://key:secret@bucket/p', 'credentials', /standard AWS sources/);
    refused('s3://bucket/a//b', 'prefix', /empty segment/);
    refused('s3://bucket/a/.hidden/b', 'prefix', /starts with '\.'/);
    refused('s3://bucket/p#frag', 'fragment', /not allowed/);
    refused(
      GOOD_S3.replace('http://127.0.0.1:7070', 'ftp://127.0.0.1'),
      'endpoint',
      /expected an http:\/\/ or https:\/\//,
    );
    refused(GOOD_S3.replace('http://127.0.0.1:7070', 'localhost'), 'endpoint', /is not a URL/);
    refused(GOOD_S3.replace('http://127.0.0.1:7070', 'http://h:1/path'), 'endpoint', /has a path or query/);
    refused(GOOD_S3.replace('http://127.0.0.1:7070', 'http://u:p@h:1'), 'endpoint', /has credentials/);
    refused(GOOD_S3.replace('eu-west-1', 'eu west'), 'region', /"eu west", expected a region name/);
    refused(
      GOOD_S3.replace('forcePathStyle=true', 'forcePathStyle=yes'),
      'forcePathStyle',
      /"yes", expected true or false/,
    );
    refused(
      `${GOOD_S3}&pathStyle=true`,
      'pathStyle',
      /unknown option, expected one of endpoint, region, forcePathStyle/,
    );
    refused(`${GOOD_S3}&region=us-east-1`, 'region', /given more than once/);
  });
});
