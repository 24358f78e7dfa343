/**
 * SigV4 by the definition, over bytes, for requests the AWS SDK will not make (a signature over
 * header bytes that are not UTF-8, a `Date` header as the request time), and a raw sender that
 * puts each header value's characters on the wire as bytes (node writes header strings as latin1).
 */
import { createHash, createHmac } from 'node:crypto';
import { request } from 'node:http';
import { decodeXmlText } from '../../../src/store/s3/xml.ts';
import { ACCESS_KEY_ID, SECRET } from './helpers.ts';

/** A header value as the bytes of `text` in UTF-8, one character per byte (what to hand node to send UTF-8). */
export const utf8Bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/** yyyymmddThhmmssZ */
export const amzDateOf = (at: Date): string =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

export interface RawSigned {
  method: string;
  /** Path as sent (already percent-encoded, canonical). */
  path: string;
  /** Query as sent, its parameters canonical and sorted (or ''). */
  query?: string;
  /** Lower-case names; values as bytes (latin1 strings). host and x-amz-content-sha256 are added. */
  headers: Record<string, string>;
  /** The time in the string to sign (and the scope's date). */
  at: Date;
  /** Which header carries the time: X-Amz-Date (default), an HTTP Date, or none at all. */
  timeIn?: 'x-amz-date' | 'date' | 'none';
  /** Its value, when not the time's own form (an HTTP Date written another way). */
  timeHeaderValue?: string;
}

/** The headers to send, Authorization included: every header is signed, its value hashed as its bytes. */
export function signRaw(endpoint: string, spec: RawSigned, secret = SECRET): Record<string, string> {
  const amzDate = amzDateOf(spec.at);
  const headers: Record<string, string> = { host: new URL(endpoint).host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...spec.headers };
  const timeIn = spec.timeIn ?? 'x-amz-date';
  if (timeIn === 'x-amz-date') headers['x-amz-date'] = spec.timeHeaderValue ?? amzDate;
  if (timeIn === 'date') headers.date = spec.timeHeaderValue ?? spec.at.toUTCString();
  const names = Object.keys(headers).sort();
  const canonical =
    `${spec.method}\n${spec.path}\n${spec.query ?? ''}\n` +
    names.map((name) => `${name}:${headers[name]!.replace(/^[ \t]+|[ \t]+$/g, '').replace(/[ \t]+/g, ' ')}\n`).join('') +
    `\n${names.join(';')}\n${headers['x-amz-content-sha256']}`;
  const scope = `${amzDate.slice(0, 8)}/auto/s3/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${createHash('sha256').update(Buffer.from(canonical, 'latin1')).digest('hex')}`;
  let key: Buffer = createHmac('sha256', `AWS4${secret}`).update(amzDate.slice(0, 8)).digest();
  for (const part of ['auto', 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return { ...headers, authorization: `AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}` };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends one request with exactly these headers (values' characters as bytes) and reads the answer. */
export function sendRaw(endpoint: string, method: string, pathAndQuery: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(pathAndQuery, endpoint);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method,
        host: url.hostname,
        port: url.port,
        path: pathAndQuery,
        headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    // A Buffer: node writes a string body's first chunk together with the head, in the body's
    // encoding (UTF-8), which would turn each header character above 0x7f into two bytes. Written,
    // not given to end(): a body given to end() makes node rewrite a Content-Disposition value
    // (its characters taken as UTF-8 bytes), so the bytes sent would not be the ones given.
    if (body !== undefined) req.write(Buffer.from(body, 'utf8'));
    req.end();
  });
}

/** The S3 error code and message of an error answer. */
export function s3Error(answer: RawAnswer): { status: number; code: string | undefined; message: string } {
  return {
    status: answer.status,
    code: /<Code>(.*?)<\/Code>/.exec(answer.body)?.[1],
    message: decodeXmlText(/<Message>(.*?)<\/Message>/s.exec(answer.body)?.[1] ?? ''),
  };
}
