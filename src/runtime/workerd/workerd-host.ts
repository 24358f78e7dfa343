/**
 * A script host on workerd: the script's source (its upload, or its bundle), registered as an
 * isolate in its account's workerd process (isolate-pool.ts) and loaded there at once, so that a
 * script that cannot load fails the start. A host without the server's pool runs a process of its
 * own, for this script alone, and stops it on close.
 */
import { basename } from 'node:path';
import { accountStore } from '../../store/engine/account-store.ts';
import type { ObjectEngine } from '../../store/engine/object-engine.ts';
import { engineBlobs } from '../../store/segment-writer.ts';
import { RuntimeError } from '../errors.ts';
import type { ScriptHost, ScriptHostOptions } from '../host.ts';
import { bundleErrorMessage, bundleModule } from './bundle.ts';
import type { ScriptSource } from './isolate-code.ts';
import { IsolatePool } from './isolate-pool.ts';

export async function startWorkerdHost(options: ScriptHostOptions): Promise<ScriptHost> {
  const { script, logger } = options;
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const source: ScriptSource = options.uploaded ?? {
      mainModule: moduleName(script.main),
      modules: [{ name: moduleName(script.main), kind: 'esModule', content: new TextEncoder().encode(await bundleScript(script.name, script.main)) }],
      vars: [],
    };
    let store: { engine: ReturnType<typeof accountStore>; blobs: ReturnType<typeof engineBlobs> } | undefined;
    if (script.storeBuckets.length > 0) {
      const buckets = accountStore(await storeEngine(options, closers), options.accountId);
      // A configured script's buckets are made for it; an uploaded one's must exist (checked at upload,
      // 10085): a bucket deleted since stays deleted, and its binding's calls fail as on the platform.
      if (!options.uploaded) for (const { bucketName } of script.storeBuckets) await buckets.ensureBucket(bucketName);
      store = { engine: buckets, blobs: engineBlobs(buckets) };
    }
    let placement = options.pool;
    if (placement === undefined) {
      const own = new IsolatePool({ logger });
      closers.push(() => own.close());
      placement = { pool: own, tenant: 'own', name: `script ${script.name}` };
    }
    const pooled = await placement.pool.open(
      placement.tenant,
      { name: placement.name, accountId: options.accountId },
      {
        script,
        source,
        accountId: options.accountId,
        ...(store ? { store } : {}),
        ...(options.tail ? { tail: options.tail } : {}),
      },
    );
    closers.push(() => pooled.close());
    return {
      handle: function handleScriptRequest(req, res) {
        pooled.handle(req, res);
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The engine the bindings use: the server's, or (edgeport dev) one this host opens, recovers and closes. */
async function storeEngine(options: ScriptHostOptions, closers: Array<() => Promise<void>>): Promise<ObjectEngine> {
  if (options.engine) return options.engine;
  const { openStoreEngine } = await import('../../store/engine/open-store-engine.ts');
  const engine = await openStoreEngine({
    dataDir: options.dataDir,
    blobsUrl: options.blobsUrl,
    logger: options.logger,
    recover: true,
    maintenance: true,
    backgroundCheckpoints: true,
    ...(options.dbUrl === undefined
      ? {}
      : { database: await (await import('../../db/postgres/pg-database.ts')).PgDatabase.open({ url: options.dbUrl, now: Date.now() }) }),
  });
  closers.push(() => engine.close());
  return engine;
}

/** The script's module name in workerd: its file name, as a `.js` module. */
function moduleName(main: string): string {
  const name = basename(main).replace(/\.(m?js|ts|mts)$/, '');
  return `${name.replace(/[^A-Za-z0-9._-]/g, '_') || 'script'}.js`;
}

async function bundleScript(name: string, main: string): Promise<string> {
  try {
    return await bundleModule(main);
  } catch (error) {
    throw new RuntimeError(
      'RUNTIME_SCRIPT_START_FAILED',
      `Script ${JSON.stringify(name)} (${main}) cannot be bundled for workerd:\n${bundleErrorMessage(error)}`,
      { cause: error },
    );
  }
}
