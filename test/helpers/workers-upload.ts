/** Script uploads as wrangler and the official SDK send them, and requests through the edge by Host, for the Workers tests. */
import { request } from 'node:http';
import Cloudflare, { toFile } from 'cloudflare';

export function sdkFor(apiUrl: string, email: string, key: string): Cloudflare {
  return new Cloudflare({ baseURL: apiUrl, apiEmail: email, apiKey: key, apiToken: null, userServiceKey: null, maxRetries: 0 });
}

/** A script's multipart body as wrangler sends it: a JSON `metadata` part and an ES module part. */
export function wranglerForm(source: string, metadata: Record<string, unknown>): FormData {
  const form = new FormData();
  form.set('metadata', new Blob([JSON.stringify({ main_module: 'index.js', compatibility_date: '2025-01-01', ...metadata })], { type: 'application/json' }));
  form.set('index.js', new Blob([source], { type: 'application/javascript+module' }), 'index.js');
  return form;
}

/** The module as the SDK's `files` entry. */
export function moduleFile(source: string, name = 'index.js'): Promise<File> {
  return toFile(Buffer.from(source), name, { type: 'application/javascript+module' }) as Promise<File>;
}

/** GET through the edge with the given Host. */
export function viaEdge(edgeUrl: string, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(edgeUrl);
    const req = request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls the edge every 50 ms until `host` answers 200 with `expected`; resolves with how long it took (ms), rejects after `withinMs`. */
export async function servedWithin(edgeUrl: string, host: string, expected: string, withinMs: number): Promise<number> {
  const start = performance.now();
  let last: { status: number; body: string } | undefined;
  while (performance.now() - start < withinMs) {
    last = await viaEdge(edgeUrl, host);
    if (last.status === 200 && last.body === expected) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${host} did not serve ${JSON.stringify(expected)} within ${withinMs} ms; last answer ${last?.status}: ${last?.body.slice(0, 300)}`);
}
