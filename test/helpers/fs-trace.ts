/**
 * Records the file system calls that make writes durable, in the order the code under test makes
 * them: `open`, `sync` (fsync or fdatasync of an opened path), `rename`, `unlink`. It wraps Node's
 * own `fs/promises` functions and FileHandle methods (and updates the named ESM imports with
 * `syncBuiltinESMExports`), so the real calls still happen; only what they are is written down.
 */
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import type { TestContext } from 'node:test';

export interface FsCall {
  op: 'open' | 'sync' | 'rename' | 'unlink';
  path: string;
  /** rename: the new name. */
  to?: string;
}

/** Starts recording; stops when the test ends. `calls` keeps the calls on paths below `under`. */
export async function traceFs(t: TestContext, under: string): Promise<{ calls: FsCall[] }> {
  const calls: FsCall[] = [];
  const record = (call: FsCall) => {
    if (call.path.startsWith(under)) calls.push(call);
  };
  const paths = new WeakMap<object, string>();
  const probe = await fsPromises.open(new URL(import.meta.url), 'r');
  const handleProto = Object.getPrototypeOf(probe) as { sync(): Promise<void>; datasync(): Promise<void> };
  await probe.close();
  const original = {
    open: fsPromises.open,
    rename: fsPromises.rename,
    unlink: fsPromises.unlink,
    rm: fsPromises.rm,
    sync: handleProto.sync,
    datasync: handleProto.datasync,
  };

  fsPromises.open = async function tracedOpen(...args: Parameters<typeof fsPromises.open>) {
    const handle = await original.open(...args);
    const path = String(args[0]);
    paths.set(handle, path);
    record({ op: 'open', path });
    return handle;
  } as typeof fsPromises.open;
  fsPromises.rename = async function tracedRename(from, to) {
    await original.rename(from, to);
    record({ op: 'rename', path: String(from), to: String(to) });
  };
  fsPromises.unlink = async function tracedUnlink(path) {
    await original.unlink(path);
    record({ op: 'unlink', path: String(path) });
  };
  fsPromises.rm = async function tracedRm(path, options) {
    await original.rm(path, options);
    record({ op: 'unlink', path: String(path) });
  };
  const traced = (method: 'sync' | 'datasync') =>
    async function tracedSync(this: object) {
      await original[method].call(this);
      record({ op: 'sync', path: paths.get(this) ?? '?' });
    };
  handleProto.sync = traced('sync');
  handleProto.datasync = traced('datasync');
  syncBuiltinESMExports();

  t.after(() => {
    Object.assign(fsPromises, { open: original.open, rename: original.rename, unlink: original.unlink, rm: original.rm });
    handleProto.sync = original.sync;
    handleProto.datasync = original.datasync;
    syncBuiltinESMExports();
  });
  return { calls };
}
