/**
 * What `edgeport start` prints on stdout once every listener is up, in one of two forms:
 * - for a person (stdout is a terminal): the URLs; how to sign in (the new e-mail and key on a
 *   first start, else which e-mail signs in and how to get a new key); the S3 access key (or how
 *   to make one); the embedded chain's development accounts; then that it is ready.
 * - for programs (a pipe, a file, CI): the same facts in stable `edgeport: ...` lines that tests and
 *   scripts read: `edgeport: <label> at <url>`, `  X-Auth-Email: `, `  X-Auth-Key: `,
 *   `  access key id: `, `  secret access key: `, `edgeport: operator <email>` and, last,
 *   `edgeport: data in <dir>; ready`.
 * The operator is the account whose e-mail and key EDGEPORT_ADMIN_EMAIL / KEY set (the first account).
 * Logs never appear here: they go to stderr (core/log.ts).
 */
import { wrap } from './usage.ts';

export type SignIn =
  /** Made by this start: shown once. */
  | { kind: 'created'; email: string; key: string }
  /**
   * From EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY; `changed` when this start gave the operator the
   * variables' e-mail (`previousEmail`, the one it had) or key.
   */
  | { kind: 'given'; email: string; changed?: { previousEmail: string | null; key: boolean } }
  /** Made by an earlier start (or `edgeport accounts create`): `email` is the first account's. */
  | { kind: 'existing'; email: string };

export type S3KeyNote =
  | { kind: 'created'; accessKeyId: string; secretAccessKey: string }
  /**
   * From EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY (the secret is never printed);
   * `replaced`: the keys a start had generated, which this start revoked.
   */
  | { kind: 'given'; accessKeyId: string; replaced?: readonly string[] }
  | { kind: 'existing' };

export interface BannerInfo {
  version: string;
  dataDir: string;
  /** Listeners in the order shown: `label` as in `edgeport: <label> at <url>`. */
  listeners: ReadonlyArray<{ label: string; url: string }>;
  scripts: ReadonlyArray<{ name: string; routes: readonly string[] }>;
  signIn: SignIn;
  /** The command that makes another account on this server's database, e.g. `edgeport accounts create <email>`. */
  accountsCommand: string;
  s3Key: S3KeyNote;
  /** Where more S3 access keys are made (POST, with the account's credentials). */
  accessKeysUrl: string;
  /** The gateway's lines on its embedded chain's development accounts (empty without one). */
  devChain: readonly string[];
  /** Where metadata and bodies live when not in the data dir (PostgreSQL, a shared blob store). */
  storage: readonly string[];
}

/** The banner, ending in a newline; `tty` picks the form for a person. */
export function formatBanner(info: BannerInfo, options: { tty: boolean }): string {
  return `${(options.tty ? forPerson(info) : forPrograms(info)).join('\n')}\n`;
}

const CHOOSE_ADMIN = 'set EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY to choose it';
const CHOOSE_S3 = 'set EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY to choose it: they replace this one';

/** What a start that revoked generated keys says of them, without its capital and full stop. */
function replacedNote(replaced: readonly string[]): string {
  const many = replaced.length > 1;
  return (
    `revoked the S3 access key${many ? 's' : ''} ${replaced.join(', ')} that a start generated: ` +
    `EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY replace ${many ? 'them' : 'it'} (the buckets stay)`
  );
}

function newKeyHint(info: BannerInfo): string {
  return `start with EDGEPORT_ADMIN_EMAIL=${info.signIn.email} EDGEPORT_ADMIN_KEY=<a new key> to replace its key, or make another account with ${info.accountsCommand}`;
}

function forPrograms(info: BannerInfo): string[] {
  const lines = info.listeners.map(({ label, url }) => `edgeport: ${label} at ${url}`);
  for (const script of info.scripts) lines.push(`edgeport: script ${JSON.stringify(script.name)} on ${script.routes.join(', ')}`);
  const { signIn, s3Key } = info;
  if (signIn.kind === 'created') {
    lines.push(`edgeport: created the first account (key shown once; ${CHOOSE_ADMIN}):`, `  X-Auth-Email: ${signIn.email}`, `  X-Auth-Key:   ${signIn.key}`);
  } else if (signIn.kind === 'given') {
    lines.push(`edgeport: sign in as ${signIn.email} with the key in EDGEPORT_ADMIN_KEY`);
    if (signIn.changed) lines.push(`edgeport: ${changeNote(signIn.email, signIn.changed)}`);
  } else {
    lines.push(`edgeport: sign in as ${signIn.email} with the key shown on the first start; lost it? ${newKeyHint(info)}`);
  }
  if (s3Key.kind === 'created') {
    lines.push(
      `edgeport: created the S3 access key (shown once; ${CHOOSE_S3}):`,
      `  access key id:     ${s3Key.accessKeyId}`,
      `  secret access key: ${s3Key.secretAccessKey}`,
    );
  } else if (s3Key.kind === 'given') {
    lines.push(`edgeport: S3 access key ${s3Key.accessKeyId} from EDGEPORT_S3_ACCESS_KEY_ID`);
    if (s3Key.replaced?.length) lines.push(`edgeport: ${replacedNote(s3Key.replaced)}`);
  } else {
    lines.push(`edgeport: S3 access keys: the first start printed one; make more in the dashboard or with POST ${info.accessKeysUrl}`);
  }
  lines.push(`edgeport: operator ${signIn.email}`);
  lines.push(...info.devChain, ...info.storage.map((line) => `edgeport: ${line}`), `edgeport: data in ${info.dataDir}; ready`);
  return lines;
}

/** What a start with new EDGEPORT_ADMIN_EMAIL / KEY values changed, as a sentence without its capital and full stop. */
function changeNote(email: string, changed: { previousEmail: string | null; key: boolean }): string {
  const notes = [
    ...(changed.previousEmail === null ? [] : ['the same account, with its zones, buckets and keys']),
    ...(changed.key ? ['the old key no longer works'] : []),
  ];
  const what =
    changed.previousEmail === null
      ? 'key changed to the one in EDGEPORT_ADMIN_KEY'
      : `e-mail changed from ${changed.previousEmail} to ${email}${changed.key ? ' and its key to the one in EDGEPORT_ADMIN_KEY' : ''}`;
  return `the operator's ${what} (${notes.join('; ')})`;
}

/** Two columns: names padded to the longest. */
function table(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(...rows.map(([name]) => name.length)) + 3;
  return rows.map(([name, value]) => `  ${name.padEnd(width)}${value}`);
}

/** Prose lines are wrapped to this width for a terminal; table rows are not. */
const WIDTH = 100;

function forPerson(info: BannerInfo): string[] {
  const lines = [`edgeport ${info.version}`, ''];
  lines.push(
    ...table([
      ...info.listeners.map(({ label, url }) => [capitalise(label), url] as const),
      ...info.scripts.map((script) => [`Script ${JSON.stringify(script.name)}`, script.routes.join(', ')] as const),
    ]),
    '',
  );
  const { signIn, s3Key } = info;
  if (signIn.kind === 'created') {
    lines.push(
      'Sign in to the dashboard and the management API with this e-mail and key. The key is shown only this once: ' +
        'keep it. (To choose them, set EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY before the first start.)',
      ...table([
        ['E-mail', signIn.email],
        ['Key', signIn.key],
      ]),
    );
  } else if (signIn.kind === 'given') {
    lines.push(`Sign in to the dashboard and the management API as ${signIn.email}, with the key in EDGEPORT_ADMIN_KEY.`);
    if (signIn.changed) lines.push(`${capitalise(changeNote(signIn.email, signIn.changed))}.`);
  } else {
    lines.push(
      `Sign in to the dashboard and the management API as ${signIn.email}, with the key shown on the first start. ` +
        `Lost it? ${capitalise(newKeyHint(info))}.`,
    );
  }
  lines.push(`The operator is ${signIn.email}: the account whose e-mail and key EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY set on every start.`, '');
  if (s3Key.kind === 'created') {
    lines.push(
      'S3 access key, shown only this once. (To choose it, set EDGEPORT_S3_ACCESS_KEY_ID and EDGEPORT_S3_SECRET_ACCESS_KEY: at the next start they replace this one.)',
      ...table([
        ['Access key id', s3Key.accessKeyId],
        ['Secret access key', s3Key.secretAccessKey],
      ]),
    );
  } else if (s3Key.kind === 'given') {
    lines.push(`S3 access key: ${s3Key.accessKeyId}, with the secret in EDGEPORT_S3_SECRET_ACCESS_KEY.`);
    if (s3Key.replaced?.length) lines.push(`${capitalise(replacedNote(s3Key.replaced))}.`);
  } else {
    lines.push(
      `S3 access keys: the first start printed one. Make more in the dashboard, or with POST ${info.accessKeysUrl} (with your X-Auth-Email and X-Auth-Key).`,
    );
  }
  if (info.devChain.length > 0) lines.push('', ...info.devChain);
  lines.push('', ...info.storage.map((line) => `${capitalise(line)}.`), `Data in ${info.dataDir}. Ready: Ctrl-C stops edgeport.`);
  return lines.map((line) => (line.startsWith(' ') ? line : wrap(line, WIDTH)));
}

function capitalise(text: string): string {
  return `${text.slice(0, 1).toUpperCase()}${text.slice(1)}`;
}
