/**
 * Signed aws-chunked bodies against AWS's own published examples ("Signature Calculations for the
 * Authorization Header: Transferring Payload in Multiple Chunks" and "... for trailing headers"):
 * 66,560 bytes of 'a' in chunks of 64 KiB and 1 KiB, signed with the documentation's example key.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { IncomingHttpHeaders } from 'node:http';
import { verifiedBody } from '../../../src/store/s3/payload.ts';
import { verifySignature } from '../../../src/store/s3/sigv4.ts';

const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const SIGNED_AT = Date.UTC(2013, 4, 24);
const DATA = Buffer.alloc(66_560, 'a');

function chunkedBody(signatures: [string, string, string], trailer = ''): Buffer {
  return Buffer.concat([
    Buffer.from(`10000;chunk-signature=${signatures[0]}\r\n`),
    DATA.subarray(0, 65_536),
    Buffer.from('\r\n'),
    Buffer.from(`400;chunk-signature=${signatures[1]}\r\n`),
    DATA.subarray(65_536),
    Buffer.from('\r\n'),
    Buffer.from(`0;chunk-signature=${signatures[2]}\r\n${trailer}\r\n`),
  ]);
}

const EXAMPLE = {
  headers: {
    host: 's3.amazonaws.com',
    'x-amz-date': '20130524T000000Z',
    'x-amz-storage-class': 'REDUCED_REDUNDANCY',
    'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    'content-encoding': 'aws-chunked',
    'content-length': '66824',
    'x-amz-decoded-content-length': '66560',
    authorization: `AWS4-HMAC-SHA256 Credential=${KEY_ID}/20130524/us-east-1/s3/aws4_request, SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class, Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9`,
  } as IncomingHttpHeaders,
  body: chunkedBody([
    'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
    '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
    'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
  ]),
};

const TRAILER_SIGNATURE = 'd81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435';
const TRAILER_EXAMPLE = {
  headers: {
    host: 's3.amazonaws.com',
    'x-amz-date': '20130524T000000Z',
    'x-amz-storage-class': 'REDUCED_REDUNDANCY',
    'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
    'content-encoding': 'aws-chunked',
    'content-length': '66946',
    'x-amz-decoded-content-length': '66560',
    'x-amz-trailer': 'x-amz-checksum-crc32c',
    authorization: `AWS4-HMAC-SHA256 Credential=${KEY_ID}/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer,Signature=106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e`,
  } as IncomingHttpHeaders,
  signatures: [
    'b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2',
    '1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7',
    '2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992',
  ] as [string, string, string],
};

async function decode(headers: IncomingHttpHeaders, body: Buffer, cuts: number[] = []): Promise<Buffer> {
  const signing = await verifySignature(
    { method: 'PUT', rawPath: '/examplebucket/chunkObject.txt', rawQuery: '', query: new URLSearchParams(), headers },
    (id) => (id === KEY_ID ? SECRET : undefined),
    SIGNED_AT,
  );
  // The body arrives in whatever pieces the socket gives.
  const points = [...new Set(cuts.map((cut) => cut % body.length))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const point of [...points, body.length]) {
    pieces.push(body.subarray(from, point));
    from = point;
  }
  const out: Buffer[] = [];
  for await (const chunk of verifiedBody(
    (async function* () {
      yield* pieces;
    })(),
    { headers, signing },
  ))
    out.push(Buffer.from(chunk));
  return Buffer.concat(out);
}

const signatureMismatch = (error: unknown) => (error as { s3Code?: string }).s3Code === 'SignatureDoesNotMatch';

test('the documented signed chunked upload decodes in any socket chunking; a changed byte or signature is refused', { timeout: 10_000 }, async () => {
  assert.equal(EXAMPLE.body.length, 66_824);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.nat(), { maxLength: 8 }), async (cuts) => {
      assert.ok((await decode(EXAMPLE.headers, EXAMPLE.body, cuts)).equals(DATA));
    }),
    { numRuns: 40 },
  );
  const tampered = Buffer.from(EXAMPLE.body);
  tampered[66_000] = 'b'.charCodeAt(0);
  await assert.rejects(decode(EXAMPLE.headers, tampered), signatureMismatch);
  const wrongSignature = Buffer.from(EXAMPLE.body.toString('latin1').replace('0055627c', '0055627d'), 'latin1');
  await assert.rejects(decode(EXAMPLE.headers, wrongSignature), signatureMismatch);
});

test('the documented signed trailer: the checksum and its signature are verified', { timeout: 10_000 }, async () => {
  const body = chunkedBody(TRAILER_EXAMPLE.signatures, `x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:${TRAILER_SIGNATURE}\r\n`);
  assert.equal(body.length, 66_946);
  assert.ok((await decode(TRAILER_EXAMPLE.headers, body, [66_900, 66_930])).equals(DATA));
  // A changed checksum breaks the trailer's signature; a missing signature is refused too.
  const changed = chunkedBody(TRAILER_EXAMPLE.signatures, `x-amz-checksum-crc32c:AAAAAA==\r\nx-amz-trailer-signature:${TRAILER_SIGNATURE}\r\n`);
  await assert.rejects(decode(TRAILER_EXAMPLE.headers, changed), signatureMismatch);
  const unsigned = chunkedBody(TRAILER_EXAMPLE.signatures, 'x-amz-checksum-crc32c:sOO8/Q==\r\n');
  await assert.rejects(decode(TRAILER_EXAMPLE.headers, unsigned), signatureMismatch);
});
