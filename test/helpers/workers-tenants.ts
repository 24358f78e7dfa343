/**
 * Accounts with deployed scripts on a running `edgeport start`, for the tests and benchmarks of
 * scripts across accounts: accounts made with `edgeport accounts create` (the CLI, on the server's
 * data dir), a zone per account, and scripts uploaded as wrangler uploads them, each routed at
 * `<zone>/<script>/*`.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { wranglerForm } from './workers-upload.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Tenant {
  email: string;
  key: string;
  id: string;
  /** The account's zone: its scripts answer at `<zone>/<script>/...`. */
  zone: string;
  zoneId: string;
}

function headers(tenant: { email: string; key: string }): Record<string, string> {
  return { 'x-auth-email': tenant.email, 'x-auth-key': tenant.key };
}

async function api<T>(apiUrl: string, tenant: { email: string; key: string }, path: string, init: RequestInit = {}): Promise<T> {
  const answer = await fetch(`${apiUrl}${path}`, {
    ...init,
    headers: { ...headers(tenant), ...(init.body && typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}) },
  });
  const body = (await answer.json()) as { success: boolean; result: T; errors: unknown };
  if (!body.success) throw new Error(`${init.method ?? 'GET'} ${path}: ${answer.status} ${JSON.stringify(body.errors)}`);
  return body.result;
}

/** An account made with `edgeport accounts create` on the server's data dir (`key` given: the operator's, already there). */
export async function tenant(apiUrl: string, dataDir: string, email: string, zone: string, key?: string): Promise<Tenant> {
  let accountKey = key;
  if (accountKey === undefined) {
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'accounts', 'create', email, '--data-dir', dataDir]);
    accountKey = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
    if (accountKey === undefined) throw new Error(`accounts create printed no key:\n${stdout}`);
  }
  const credentials = { email, key: accountKey };
  const [account] = await api<Array<{ id: string }>>(apiUrl, credentials, '/accounts');
  const created = await api<{ id: string }>(apiUrl, credentials, '/zones', {
    method: 'POST',
    body: JSON.stringify({ name: zone, account: { id: account!.id } }),
  });
  return { ...credentials, id: account!.id, zone, zoneId: created.id };
}

/** Uploads and deploys `source` as `name` (as wrangler does), routed at `<zone>/<name>/*`. */
export async function deploy(apiUrl: string, owner: Tenant, name: string, source: string): Promise<void> {
  const uploaded = await fetch(`${apiUrl}/accounts/${owner.id}/workers/scripts/${name}`, {
    method: 'PUT',
    headers: headers(owner),
    body: wranglerForm(source, {}),
  });
  if (uploaded.status !== 200) throw new Error(`upload of ${name}: ${uploaded.status} ${await uploaded.text()}`);
  await api(apiUrl, owner, `/zones/${owner.zoneId}/workers/routes`, {
    method: 'POST',
    body: JSON.stringify({ pattern: `${owner.zone}/${name}/*`, script: name }),
  });
}

/** Runs `work` on each item, at most `limit` at a time. */
export async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}
