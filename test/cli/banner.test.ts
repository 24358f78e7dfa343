/**
 * The start banner in both forms: for a person on a terminal (tested here through the formatting
 * function, as node has no pseudo-terminal without a dependency) and for programs (the lines
 * test/helpers/edgeport-server.ts and scripts read; the e2e tests check them on a real start).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBanner, type BannerInfo } from '../../src/cli/banner.ts';
import { describeDevAccounts, DEV_ACCOUNTS } from '../../src/gateway/backends/dev-accounts.ts';

const BASE: BannerInfo = {
  version: '1.2.3',
  dataDir: './.edgeport',
  listeners: [
    { label: 'edge', url: 'http://127.0.0.1:8080' },
    { label: 'management API', url: 'http://127.0.0.1:8081/client/v4' },
    { label: 'dashboard', url: 'http://127.0.0.1:8081/' },
    { label: 'gateway', url: 'http://127.0.0.1:8545/v1/<network>' },
    { label: 'S3-compatible API', url: 'http://127.0.0.1:9000' },
  ],
  scripts: [{ name: 'hello', routes: ['example.test/*', 'example.test/api/*'] }],
  signIn: { kind: 'created', email: 'admin@edgeport.local', key: '0123456789abcdef0123456789abcdef01234' },
  accountsCommand: 'edgeport accounts create <email>',
  s3Key: { kind: 'created', accessKeyId: 'EP0123456789ABCDEF01', secretAccessKey: 'sEcReT/0123456789abcdefghijklmnopqrstuv' },
  accessKeysUrl: 'http://127.0.0.1:8081/client/v4/accounts/8c1f/store/access-keys',
  devChain: describeDevAccounts('sepolia'),
  storage: [],
};

const LATER: BannerInfo = { ...BASE, signIn: { kind: 'existing', email: 'admin@edgeport.local' }, s3Key: { kind: 'existing' } };

/** Where `needle` first appears in `text` (it must). */
function at(text: string, needle: string | RegExp): number {
  const index = typeof needle === 'string' ? text.indexOf(needle) : text.search(needle);
  assert.ok(index >= 0, `the banner has ${needle}:\n${text}`);
  return index;
}

test('on a terminal: only lines for a person, in order: URLs, sign-in, S3 key, dev chain accounts, ready', { timeout: 5_000 }, () => {
  const text = formatBanner(BASE, { tty: true });
  const order = [
    at(text, /^ {2}Edge +http:\/\/127\.0\.0\.1:8080$/m),
    at(text, /^ {2}Management API +http:\/\/127\.0\.0\.1:8081\/client\/v4$/m),
    at(text, /^ {2}Dashboard +http:\/\/127\.0\.0\.1:8081\/$/m),
    at(text, /^ {2}Gateway +http:\/\/127\.0\.0\.1:8545\/v1\/<network>$/m),
    at(text, /^ {2}S3-compatible API +http:\/\/127\.0\.0\.1:9000$/m),
    at(text, /^ {2}Script "hello" +example\.test\/\*, example\.test\/api\/\*$/m),
    at(text, /^Sign in to the dashboard and the management API with this e-mail and key\. The key is shown only this\nonce/m),
    at(text, /^ {2}E-mail +admin@edgeport\.local$/m),
    at(text, /^ {2}Key +0123456789abcdef0123456789abcdef01234$/m),
    at(text, /^S3 access key, shown only this once/m),
    at(text, /^ {2}Access key id +EP0123456789ABCDEF01$/m),
    at(text, /^ {2}Secret access key +sEcReT\/0123456789abcdefghijklmnopqrstuv$/m),
    at(text, /^Embedded chain sepolia: 10 funded development accounts, 10000 ETH each, with their private keys\./m),
    at(text, `  #9 ${DEV_ACCOUNTS[9]!.address} private key ${DEV_ACCOUNTS[9]!.privateKey}`),
    at(text, /^Data in \.\/\.edgeport\. Ready: Ctrl-C stops edgeport\.\n$/m),
  ];
  assert.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
    'in this order',
  );
  assert.ok(text.startsWith('edgeport 1.2.3\n\n'));
  assert.doesNotMatch(text, /^edgeport: /m, 'no machine lines');
  assert.doesNotMatch(text, /^\{/m, 'no JSON log lines');
  for (const line of text.split('\n')) if (!line.startsWith('  ')) assert.ok(line.length <= 100, `prose wraps at 100 columns: ${line}`);
});

test('on a terminal, a later start says which e-mail signs in, how to get a new key, and how to make an S3 key', { timeout: 5_000 }, () => {
  const text = formatBanner({ ...LATER, accountsCommand: 'edgeport accounts create <email> --data-dir /srv/ep' }, { tty: true }).replace(/\n(?! )/g, ' ');
  assert.match(text, /Sign in to the dashboard and the management API as admin@edgeport\.local, with the key shown on the first start\./);
  assert.match(
    text,
    /Lost it\? Start with EDGEPORT_ADMIN_EMAIL=admin@edgeport\.local EDGEPORT_ADMIN_KEY=<a new key> to replace its key, or make another account with edgeport accounts create <email> --data-dir \/srv\/ep\./,
  );
  assert.match(
    text,
    /S3 access keys: the first start printed one\. Make more in the dashboard, or with POST http:\/\/127\.0\.0\.1:8081\/client\/v4\/accounts\/8c1f\/store\/access-keys \(with your X-Auth-Email and X-Auth-Key\)\./,
  );
  assert.ok(text.indexOf('Sign in') < text.indexOf('S3 access keys') && text.indexOf('S3 access keys') < text.indexOf('Embedded chain'));
  const given = formatBanner(
    { ...BASE, signIn: { kind: 'given', email: 'ops@example.com' }, s3Key: { kind: 'given', accessKeyId: 'EPCI', replaced: ['EPSTART00112233445566'] } },
    { tty: true },
  ).replace(/\n(?! )/g, ' ');
  assert.match(given, /as ops@example\.com, with the key in EDGEPORT_ADMIN_KEY\./);
  assert.match(
    given,
    /S3 access key: EPCI, with the secret in EDGEPORT_S3_SECRET_ACCESS_KEY\. Revoked the S3 access key EPSTART00112233445566 that a start generated: EDGEPORT_S3_ACCESS_KEY_ID \/ EDGEPORT_S3_SECRET_ACCESS_KEY replace it \(the buckets stay\)\./,
  );
});

test('for programs: the stable lines the test helper and scripts parse, the ready line last', { timeout: 5_000 }, () => {
  const text = formatBanner({ ...BASE, storage: ['metadata in PostgreSQL at postgres://u:***@h/db (schema public)'] }, { tty: false });
  const urls = Object.fromEntries([...text.matchAll(/^edgeport: (.+) at (http:\/\/\S+)$/gm)].map((m) => [m[1], m[2]]));
  assert.deepEqual(urls, Object.fromEntries(BASE.listeners.map(({ label, url }) => [label, url])));
  assert.match(text, /^ {2}X-Auth-Email: admin@edgeport\.local$/m);
  assert.equal(/X-Auth-Key: +(\S+)/.exec(text)?.[1], '0123456789abcdef0123456789abcdef01234');
  assert.equal(/access key id: +(\S+)/.exec(text)?.[1], 'EP0123456789ABCDEF01');
  assert.equal(/secret access key: +(\S+)/.exec(text)?.[1], 'sEcReT/0123456789abcdefghijklmnopqrstuv');
  assert.match(text, /^edgeport: script "hello" on example\.test\/\*, example\.test\/api\/\*$/m);
  assert.match(text, /^edgeport: metadata in PostgreSQL at postgres:\/\/u:\*\*\*@h\/db \(schema public\)$/m);
  assert.ok(text.endsWith('edgeport: data in ./.edgeport; ready\n'));
  assert.ok(
    text.indexOf('X-Auth-Key') < text.indexOf('access key id') && text.indexOf('access key id') < text.indexOf('Embedded chain'),
    'credentials before the dev chain accounts',
  );

  const later = formatBanner(LATER, { tty: false });
  assert.doesNotMatch(later, /X-Auth-Key:|access key id:|secret access key:/, 'no credentials to parse on a later start');
  assert.match(
    later,
    /^edgeport: sign in as admin@edgeport\.local with the key shown on the first start; lost it\? start with EDGEPORT_ADMIN_EMAIL=admin@edgeport\.local EDGEPORT_ADMIN_KEY=<a new key>/m,
  );
  const given = formatBanner({ ...BASE, s3Key: { kind: 'given', accessKeyId: 'EPCI', replaced: ['EPSTART00112233445566'] } }, { tty: false });
  assert.equal(/secret access key: +(\S+)/.exec(given), null, 'a given secret is never printed');
  assert.match(
    given,
    /^edgeport: S3 access key EPCI from EDGEPORT_S3_ACCESS_KEY_ID\nedgeport: revoked the S3 access key EPSTART00112233445566 that a start generated: EDGEPORT_S3_ACCESS_KEY_ID \/ EDGEPORT_S3_SECRET_ACCESS_KEY replace it \(the buckets stay\)$/m,
  );
  for (const form of [text, later, given]) assert.match(form, /^edgeport: operator admin@edgeport\.local$/m, 'every start names the operator');
});

test('a start with new EDGEPORT_ADMIN_EMAIL / KEY values says what changed for the operator, in both forms', { timeout: 5_000 }, () => {
  const renamed: BannerInfo = { ...LATER, signIn: { kind: 'given', email: 'new@example.com', changed: { previousEmail: 'admin@edgeport.local', key: true } } };
  const programs = formatBanner(renamed, { tty: false });
  assert.match(programs, /^edgeport: sign in as new@example\.com with the key in EDGEPORT_ADMIN_KEY$/m);
  assert.match(
    programs,
    /^edgeport: the operator's e-mail changed from admin@edgeport\.local to new@example\.com and its key to the one in EDGEPORT_ADMIN_KEY \(the same account, with its zones, buckets and keys; the old key no longer works\)$/m,
  );
  assert.match(programs, /^edgeport: operator new@example\.com$/m);
  const person = formatBanner(renamed, { tty: true }).replace(/\n(?! )/g, ' ');
  assert.match(
    person,
    /The operator's e-mail changed from admin@edgeport\.local to new@example\.com and its key to the one in EDGEPORT_ADMIN_KEY \(the same account, with its zones, buckets and keys; the old key no longer works\)\./,
  );
  assert.match(person, /The operator is new@example\.com: the account whose e-mail and key EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY set on every start\./);
  const rekeyed = formatBanner(
    { ...LATER, signIn: { kind: 'given', email: 'admin@edgeport.local', changed: { previousEmail: null, key: true } } },
    { tty: false },
  );
  assert.match(rekeyed, /^edgeport: the operator's key changed to the one in EDGEPORT_ADMIN_KEY \(the old key no longer works\)$/m);
  const same = formatBanner({ ...LATER, signIn: { kind: 'given', email: 'admin@edgeport.local' } }, { tty: false });
  assert.doesNotMatch(same, /changed/, 'nothing to say when nothing changed');
});
