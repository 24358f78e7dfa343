/**
 * `edgeport accounts <action> [--config edgeport.toml] [--data-dir DIR]`, on the server's database
 * (SQLite in the data dir, or `[db] url`):
 * - `create <email>`: makes an account and prints its key, once (only its hash is stored);
 * - `list`: every account, the operator first, with the zones, log jobs, buckets and deployed
 *   scripts it holds;
 * - `rotate-key <email>`: a new generated key, printed once; the old key and the account's
 *   dashboard sessions stop working at once;
 * - `delete <email> [--force]`: deletes the account, its S3 keys and sessions; one that holds
 *   zones (with their rulesets and jobs), buckets or deployed scripts only with --force, which
 *   deletes them (objects and open uploads included) first. The operator is never deleted;
 * - `quota <email> [--max-object-bytes N] [--max-objects N] [--max-script-bytes N]`: what the
 *   account stores against its quotas; each option sets the account's own (`default`: the
 *   server's `[quotas]` again).
 * Safe while the server runs, so they take no data dir lock (data-dir-lock.ts): every write goes
 * through SQLite's WAL, or a PostgreSQL transaction, like the server's, and the server reads
 * accounts, keys, zones and buckets from the database on each request (its caches of zones and S3
 * keys last a second at most).
 */
import { AccountError, createAccount } from '../api/index.ts';
import { generateApiKey, hashApiKey } from '../api/credentials.ts';
import { systemClock } from '../core/clock.ts';
import { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import type { AccountUsage, QuotaName } from '../db/account-usage.ts';
import type { AccountRecord, ControlStore } from '../db/control-store.ts';
import { openControlStore } from '../db/open-control-store.ts';
import { openScriptRegistry } from '../db/scripts/script-registry-drivers.ts';
import type { ScriptRegistry } from '../db/scripts/script-registry.ts';
import { accountStore } from '../store/engine/account-store.ts';
import type { ObjectEngine } from '../store/engine/object-engine.ts';
import { openStoreEngine } from '../store/engine/open-store-engine.ts';
import type { StoreEngine } from '../store/engine/store-engine.ts';
import { AccessKeys } from '../store/s3/access-keys.ts';
import { parseAccountsArgs, type AccountsArgs } from './args.ts';
import { loadCommandConfig } from './command-config.ts';

type Out = (line: string) => void;

/** Runs `edgeport accounts <args>` (the action first); `out` receives the lines meant for stdout. */
export async function runAccounts(args: readonly string[], out: Out = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const parsed = parseAccountsArgs(args);
  const config = loadCommandConfig(parsed);
  // pg is loaded only when a PostgreSQL URL is configured.
  const database =
    config.dbUrl === undefined
      ? undefined
      : await (await import('../db/postgres/pg-database.ts')).PgDatabase.open({ url: config.dbUrl, now: systemClock.now() });
  try {
    const control = await openControlStore({ dataDir: config.dataDir, clock: systemClock, ...(database ? { database } : {}) });
    try {
      if (parsed.action === 'create' || parsed.action === 'rotate-key') {
        const scrypt = new ScryptThread();
        try {
          await (parsed.action === 'create' ? create(control, parsed.email, scrypt, out) : rotateKey(control, parsed.email, scrypt, out));
        } finally {
          await scrypt.close();
        }
        return;
      }
      // Buckets and S3 keys live in the object store's metadata, deployed scripts in their registry.
      const engine = await openStoreEngine({
        dataDir: config.dataDir,
        clock: systemClock,
        blobsUrl: config.blobsUrl,
        quotas: config.quotas,
        ...(database ? { database } : {}),
      });
      const registry = openScriptRegistry({ dataDir: config.dataDir, clock: systemClock, quotas: config.quotas, ...(database ? { database } : {}) });
      const held = { control, engine, registry };
      try {
        if (parsed.action === 'list') await list(held, out);
        else if (parsed.action === 'quota') await quota(held, parsed, out);
        else await remove(held, new AccessKeys(engine.metadata, systemClock), parsed, out);
      } finally {
        await registry.close();
        await engine.close();
      }
    } finally {
      await control.close();
    }
  } finally {
    await database?.close();
  }
}

async function create(control: ControlStore, email: string, scrypt: ScryptThread, out: Out): Promise<void> {
  const { account, key } = await createAccount(control, email, { scrypt });
  out(`edgeport: created account ${account.id} for ${account.email}. Its API key is shown only this once:`);
  out(`  X-Auth-Email: ${account.email}`);
  out(`  X-Auth-Key:   ${key}`);
}

async function rotateKey(control: ControlStore, email: string, scrypt: ScryptThread, out: Out): Promise<void> {
  const account = await accountByEmail(control, email);
  const key = generateApiKey();
  await control.setAccountKeyHash(account.id, await hashApiKey(key, scrypt));
  const operator = (await control.firstAccount())?.id === account.id;
  out(`edgeport: a new API key for ${account.email}, shown only this once (the old key and its dashboard sessions no longer work):`);
  out(`  X-Auth-Email: ${account.email}`);
  out(`  X-Auth-Key:   ${key}`);
  if (operator)
    out(
      'edgeport: this is the operator: a start with EDGEPORT_ADMIN_KEY set puts that key back; set it to this one, or unset both EDGEPORT_ADMIN_* variables.',
    );
}

/** Where an account's things are kept. */
interface Stores {
  control: ControlStore;
  engine: ObjectEngine;
  registry: ScriptRegistry;
}

/** What an account holds: its zones (with their log jobs), buckets and deployed scripts. */
async function holdings(
  { control, engine, registry }: Stores,
  account: AccountRecord,
): Promise<{ zones: string[]; jobs: number; buckets: string[]; scripts: string[] }> {
  const zones: string[] = [];
  let jobs = 0;
  for (let offset = 0; ; offset += 50) {
    const page = await control.listZones(account.id, { order: 'name', direction: 'asc', offset, limit: 50 });
    for (const zone of page.zones) {
      zones.push(zone.name);
      jobs += await control.countJobs(zone.id);
    }
    if (page.zones.length < 50) break;
  }
  const buckets = (await accountStore(engine, account.id).listBuckets()).map((bucket) => bucket.name);
  const scripts = (await registry.listScripts(account.id)).map((script) => script.name);
  return { zones, jobs, buckets, scripts };
}

async function list(stores: Stores, out: Out): Promise<void> {
  const accounts = await stores.control.listAccounts();
  const rows = [['ID', 'E-MAIL', 'CREATED', 'ZONES', 'LOG JOBS', 'BUCKETS', 'SCRIPTS', '']];
  for (const [index, account] of accounts.entries()) {
    const held = await holdings(stores, account);
    rows.push([
      account.id,
      account.email,
      new Date(account.created).toISOString(),
      String(held.zones.length),
      String(held.jobs),
      String(held.buckets.length),
      String(held.scripts.length),
      index === 0 ? 'operator' : '',
    ]);
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    out(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    );
}

async function remove(stores: Stores, keys: AccessKeys, args: AccountsArgs, out: Out): Promise<void> {
  const { control, engine, registry } = stores;
  const account = await accountByEmail(control, args.email);
  if ((await control.firstAccount())?.id === account.id)
    throw new AccountError(
      'ACCOUNT_IS_OPERATOR',
      `${account.email} is the operator (the first account) and cannot be deleted: change its e-mail and key with EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY instead.`,
    );
  const held = await holdings(stores, account);
  const what = [
    ...(held.zones.length > 0 ? [`${held.zones.length} zones (${named(held.zones)}) with ${held.jobs} log jobs`] : []),
    ...(held.buckets.length > 0 ? [`${held.buckets.length} buckets (${named(held.buckets)})`] : []),
    ...(held.scripts.length > 0 ? [`${held.scripts.length} deployed scripts (${named(held.scripts)})`] : []),
  ];
  if (what.length > 0 && !args.force) {
    throw new AccountError(
      'ACCOUNT_NOT_EMPTY',
      `${account.email} still holds ${what.join(' and ')}: delete them first, or add --force to delete them with the account.`,
    );
  }
  for (const script of held.scripts) await registry.deleteScript(account.id, script);
  let zones = 0;
  for (;;) {
    const page = await control.listZones(account.id, { order: 'name', direction: 'asc', offset: 0, limit: 50 });
    for (const zone of page.zones) if (await control.deleteZone(account.id, zone.id)) zones += 1;
    if (page.zones.length === 0) break;
  }
  const store = accountStore(engine, account.id);
  let objects = 0;
  for (const bucket of held.buckets) objects += await emptyBucket(store, bucket);
  let revoked = 0;
  for (const key of await keys.list(account.id)) if (key.revoked === null && (await keys.revoke(account.id, key.accessKeyId))) revoked += 1;
  await control.deleteAccount(account.id);
  await engine.metadata.forgetAccountUsage(account.id);
  const gone =
    args.force && what.length > 0 ? ` with ${zones} zones, ${held.buckets.length} buckets (${objects} objects) and ${held.scripts.length} scripts` : '';
  out(`edgeport: deleted account ${account.id} (${account.email})${gone}; ${revoked} S3 keys revoked.`);
}

/** What each quota is called in the table, and the `[quotas]` key that sets the server's. */
const QUOTA_ROWS: ReadonlyArray<[QuotaName, string, string, 'bytes' | 'count', (usage: AccountUsage) => number]> = [
  ['maxObjectBytes', 'object bytes', 'max_object_bytes_per_account', 'bytes', (usage) => usage.objectBytes],
  ['maxObjects', 'objects', 'max_objects_per_account', 'count', (usage) => usage.objectCount],
  ['maxScriptBytes', 'script bytes', 'max_script_bytes_per_account', 'bytes', (usage) => usage.scriptBytes],
];

/** `quota`: sets the account's own quotas the options name, then shows what it stores against each. */
async function quota({ control, engine }: Stores, args: AccountsArgs, out: Out): Promise<void> {
  const account = await accountByEmail(control, args.email);
  const changed = Object.keys(args.quotas).length > 0;
  const usage = changed ? await engine.metadata.setAccountQuotas(account.id, args.quotas) : await engine.accountUsage(account.id);
  out(`edgeport: ${account.email} (${account.id})${changed ? ' now has these quotas' : ''}:`);
  const shown = (amount: number, unit: 'bytes' | 'count') => (unit === 'bytes' && amount >= 1024 ? `${amount} (${humanBytes(amount)})` : String(amount));
  const rows = [['QUOTA', 'STORED', 'LIMIT', 'SET BY']];
  for (const [name, label, key, unit, stored] of QUOTA_ROWS) {
    const limit = usage.quotas[name];
    rows.push([
      label,
      shown(stored(usage), unit),
      limit === 0 ? 'none' : shown(limit, unit),
      usage.own[name] ? 'this account (edgeport accounts quota)' : `[quotas] ${key}`,
    ]);
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    out(
      `  ${row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()}`,
    );
  out(`  Each script keeps its ${usage.quotas.maxVersionsPerScript} newest versions and the deployed one ([quotas] max_versions_per_script).`);
}

/** 1536 -> "1.5 KiB", 107374182400 -> "100 GiB". */
function humanBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Deletes every object and open upload of the bucket, then the bucket; returns how many objects went. */
async function emptyBucket(store: StoreEngine, bucket: string): Promise<number> {
  let objects = 0;
  for (;;) {
    const page = await store.list(bucket, { limit: 1000 });
    if (page.objects.length === 0) break;
    await store.delete(
      bucket,
      page.objects.map((object) => object.key),
    );
    objects += page.objects.length;
  }
  for (const upload of await store.listUploads(bucket)) await store.abortMultipartUpload(bucket, upload.key, upload.uploadId);
  await store.deleteBucket(bucket);
  return objects;
}

async function accountByEmail(control: ControlStore, email: string): Promise<AccountRecord> {
  const account = await control.findAccountByEmail(email);
  if (!account) throw new AccountError('ACCOUNT_NOT_FOUND', `No account has the e-mail ${email}: edgeport accounts list shows them.`);
  return account;
}

function named(names: readonly string[]): string {
  return names.length > 3 ? `${names.slice(0, 3).join(', ')}, ...` : names.join(', ');
}
