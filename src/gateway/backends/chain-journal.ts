/**
 * Persistence of an embedded chain. EDR keeps its state in memory and has no dump/load, but its
 * chain is deterministic: the same genesis, the same raw transactions mined at the same
 * timestamps give the same blocks, hashes included. So the journal records the genesis time and
 * every accepted raw transaction with its block's timestamp, appended and fsynced before the
 * transaction hash is answered, and the chain is rebuilt from it at start.
 *
 * Layout: `<data-dir>/gateway/<network>.chain.ndjson`, one JSON object per line: a header
 * `{format, version, chainId, genesisTime}`, then `{t, raw}` per transaction (`t`: block
 * timestamp, hex seconds). A last line cut short by a crash is dropped.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, truncate, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

const FORMAT = 'edgeport-chain-journal';
const VERSION = 1;

export interface JournalEntry {
  /** The block timestamp, hex seconds. */
  t: string;
  /** The signed transaction as sent. */
  raw: string;
}

interface JournalHeader {
  format: typeof FORMAT;
  version: number;
  chainId: number;
  /** Genesis block time, seconds since the epoch. */
  genesisTime: number;
}

export interface OpenedJournal {
  journal: ChainJournal;
  genesisTime: number;
  entries: JournalEntry[];
  /** Set when an existing journal could not be used and was renamed to this path. */
  movedAside: string | undefined;
}

export class ChainJournal {
  readonly path: string;
  readonly #file: FileHandle;

  private constructor(path: string, file: FileHandle) {
    this.path = path;
    this.#file = file;
  }

  /** Opens (or creates) the journal of a chain; an unusable one is moved aside, never deleted. */
  static async open(path: string, chainId: number, nowMs: number): Promise<OpenedJournal> {
    await mkdir(dirname(path), { recursive: true });
    const existing = await readExisting(path, chainId);
    if (existing.kind === 'usable') {
      return {
        journal: new ChainJournal(path, await open(path, 'a')),
        genesisTime: existing.header.genesisTime,
        entries: existing.entries,
        movedAside: undefined,
      };
    }
    let movedAside: string | undefined;
    if (existing.kind === 'unusable') movedAside = await ChainJournal.moveAside(path, nowMs);
    const genesisTime = Math.floor(nowMs / 1000);
    const file = await open(path, 'w');
    const header: JournalHeader = { format: FORMAT, version: VERSION, chainId, genesisTime };
    await file.appendFile(`${JSON.stringify(header)}\n`);
    await file.sync();
    return { journal: new ChainJournal(path, file), genesisTime, entries: [], movedAside };
  }

  /** Renames a journal that cannot be replayed so a fresh chain can start; returns the new name. */
  static async moveAside(path: string, nowMs: number): Promise<string> {
    const aside = `${path}.${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.unused`;
    await rename(path, aside);
    return aside;
  }

  /** Appends one transaction and makes it durable. */
  async append(entry: JournalEntry): Promise<void> {
    await this.#file.appendFile(`${JSON.stringify(entry)}\n`);
    await this.#file.datasync();
  }

  async close(): Promise<void> {
    await this.#file.close();
  }
}

type Existing = { kind: 'none' } | { kind: 'unusable' } | { kind: 'usable'; header: JournalHeader; entries: JournalEntry[] };

async function readExisting(path: string, chainId: number): Promise<Existing> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    throw error;
  }
  const complete = text.lastIndexOf('\n') + 1;
  if (complete < text.length) await truncate(path, Buffer.byteLength(text.slice(0, complete)));
  const lines = text
    .slice(0, complete)
    .split('\n')
    .filter((line) => line.length > 0);
  if (lines.length === 0) return { kind: 'none' };
  try {
    const header = JSON.parse(lines[0]!) as JournalHeader;
    if (header.format !== FORMAT || header.version !== VERSION || header.chainId !== chainId || !Number.isInteger(header.genesisTime))
      return { kind: 'unusable' };
    const entries = lines.slice(1).map((line) => JSON.parse(line) as JournalEntry);
    if (entries.some((e) => typeof e.t !== 'string' || typeof e.raw !== 'string')) return { kind: 'unusable' };
    return { kind: 'usable', header, entries };
  } catch {
    return { kind: 'unusable' };
  }
}
