/**
 * The file:// destination: each batch is noted, written to a temporary file, fsynced, renamed into
 * place and its directories fsynced, in that order; a failed write leaves no temporary file; every
 * write is checked against the file roots again (a symbolic link swapped in after the job leads no
 * write outside; the data dir is refused even inside a root).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DestinationError, type DeliveredBatch, type TempFileNotes } from '../../src/logs/destinations/destination.ts';
import { BATCH_TEMP_FILE, fileDestination } from '../../src/logs/destinations/file-destination.ts';
import { FileRoots } from '../../src/logs/destinations/file-roots.ts';
import { traceFs, type FsCall } from '../helpers/fs-trace.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const NAME = '20261123/20261123T020000Z_20261123T020001Z_ab12cd34.log.gz';

function batch(text: string, tempFiles?: TempFileNotes): DeliveredBatch {
  return {
    name: NAME,
    gzipped: gzipSync(text),
    firstTime: Date.parse('2026-11-23T02:00:00Z'),
    contentType: 'application/x-ndjson',
    ...(tempFiles ? { tempFiles } : {}),
  };
}

/** Notes kept in the same list as the traced calls, to see where they fall. */
function notesInto(calls: Array<FsCall | { op: 'note' | 'clear'; path: string }>): TempFileNotes {
  return {
    async note(path) {
      calls.push({ op: 'note', path });
    },
    async clear() {
      calls.push({ op: 'clear', path: '' });
    },
  };
}

/** Every file below `dir`, relative to it. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

test(
  'a batch: noted, written to a temporary file, fsynced, renamed into place, then its directory and every directory it made fsynced',
  { timeout: 20_000 },
  async (t) => {
    const root = tempDir(t);
    const logs = join(root, 'logs');
    const destination = fileDestination(logs, new FileRoots({ roots: [root], dataDir: tempDir(t) }));
    const trace = await traceFs(t, root);
    const calls = trace.calls as Array<FsCall | { op: 'note' | 'clear'; path: string }>;
    await destination.write(batch('{"n":1}\n', notesInto(calls)));

    const final = join(logs, NAME);
    const tmp = calls[0]!.path;
    assert.match(tmp, BATCH_TEMP_FILE);
    assert.ok(tmp.startsWith(`${final}.`), tmp);
    assert.deepEqual(calls, [
      { op: 'note', path: tmp },
      { op: 'open', path: tmp },
      { op: 'sync', path: tmp },
      { op: 'rename', path: tmp, to: final },
      { op: 'open', path: join(logs, '20261123') },
      { op: 'sync', path: join(logs, '20261123') },
      // The write made logs/ and logs/20261123/: their entries are synced in their parents.
      { op: 'open', path: logs },
      { op: 'sync', path: logs },
      { op: 'open', path: root },
      { op: 'sync', path: root },
      { op: 'clear', path: '' },
    ]);
    assert.equal(gunzipSync(readFileSync(final)).toString(), '{"n":1}\n');
    assert.deepEqual(filesBelow(logs), [NAME]);

    // Into an existing directory only that directory is synced; the same name replaces the batch.
    calls.length = 0;
    await destination.write(batch('{"n":2}\n', notesInto(calls)));
    assert.deepEqual(
      calls.map((c) => c.op),
      ['note', 'open', 'sync', 'rename', 'open', 'sync', 'clear'],
    );
    assert.deepEqual(filesBelow(logs), [NAME]);
    assert.equal(gunzipSync(readFileSync(final)).toString(), '{"n":2}\n');
  },
);

test('a write that fails leaves no temporary file and clears its note', { timeout: 20_000 }, async (t) => {
  const root = tempDir(t);
  // The batch's name is taken by a directory: the rename fails.
  mkdirSync(join(root, NAME), { recursive: true });
  const notes: string[] = [];
  const destination = fileDestination(root, new FileRoots({ roots: [root], dataDir: tempDir(t) }));
  await assert.rejects(
    destination.write(
      batch('x', {
        note: async (p) => {
          notes.push(p);
        },
        clear: async () => {
          notes.push('cleared');
        },
      }),
    ),
    (error: unknown) => error instanceof DestinationError && error.message.startsWith(`could not write ${join(root, NAME)}: `),
  );
  assert.equal(notes.at(-1), 'cleared');
  assert.deepEqual(filesBelow(root), [], 'no temporary file is left');
});

test(
  'every write is checked again: a symbolic link swapped in after the job leads no write outside; the data dir is refused inside a root',
  { timeout: 20_000 },
  async (t) => {
    const base = tempDir(t);
    const [root, outside, dataDir] = [join(base, 'root'), join(base, 'outside'), join(base, 'root', 'data')];
    mkdirSync(join(root, 'logs'), { recursive: true });
    mkdirSync(outside);
    mkdirSync(dataDir);
    const roots = new FileRoots({ roots: [root], dataDir });
    await fileDestination(join(root, 'logs'), roots).write(batch('ok'));
    assert.deepEqual(filesBelow(join(root, 'logs')), [NAME]);

    // The day directory, then the destination itself, swapped for links to a directory outside.
    renameSync(join(root, 'logs', '20261123'), join(root, 'logs', 'before'));
    symlinkSync(outside, join(root, 'logs', '20261123'));
    await assert.rejects(fileDestination(join(root, 'logs'), roots).write(batch('leak')), /refused to write below .*through a symbolic link/);
    renameSync(join(root, 'logs'), join(root, 'logs-before'));
    symlinkSync(outside, join(root, 'logs'));
    await assert.rejects(fileDestination(join(root, 'logs'), roots).write(batch('leak')), /through a symbolic link/);
    // A dangling link would have the directory made where it points.
    symlinkSync(join(outside, 'made-by-us'), join(root, 'dangling'));
    await assert.rejects(fileDestination(join(root, 'dangling'), roots).write(batch('leak')), /through a symbolic link/);
    assert.deepEqual([filesBelow(outside), existsSync(join(outside, 'made-by-us'))], [[], false], 'nothing written outside');

    await assert.rejects(fileDestination(join(dataDir, 'blobs'), roots).write(batch('x')), /inside the server's data directory/);
    await assert.rejects(fileDestination(join(base, 'elsewhere'), roots).write(batch('x')), new RegExp(`\\(\\[logs\\] file_roots\\): ${root}$`));
    await assert.rejects(fileDestination(root, FileRoots.none()).write(batch('x')), /file:\/\/ destinations are turned off/);
    assert.deepEqual(filesBelow(dataDir), []);
  },
);
