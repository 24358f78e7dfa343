/**
 * A script host on workerd: bundles the script, writes a workerd config for it into a private
 * directory (mode 0700: its sockets are reachable by this user only), starts the store service
 * its bucket bindings reach, and runs workerd under a supervisor. Requests reach the script through
 * workerd's Unix socket; the server answers them as it does for every runtime.
 */
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { accountStore } from '../../store/engine/account-store.ts';
import type { ObjectEngine } from '../../store/engine/object-engine.ts';
import { engineBlobs } from '../../store/segment-writer.ts';
import { RuntimeError } from '../errors.ts';
import type { ScriptHost, ScriptHostOptions } from '../host.ts';
import { bundleErrorMessage, bundleModule } from './bundle.ts';
import { entryModuleSource } from './entry-module.ts';
import { tailModuleSource } from './tail-module.ts';
import { startTailSink } from './tail-sink.ts';
import { makeScratchDir } from './scratch-dirs.ts';
import { ScriptOutputLog } from './script-output-log.ts';
import { startStoreService, type StoreService } from './store-service.ts';
import { CONFIG_FILES, workerdConfig, type WorkerdModule, type WorkerdVar } from './workerd-config.ts';
import { WORKERD } from './workerd-package.ts';
import { proxyToWorkerd } from './workerd-proxy.ts';
import { WorkerdSupervisor } from './workerd-supervisor.ts';

const INSIDE = new URL('./inside/', import.meta.url);

export async function startWorkerdHost(options: ScriptHostOptions): Promise<ScriptHost> {
  const { script, logger } = options;
  // Removed on close, at exit if not before, and by the next start if this process is killed (scratch-dirs.ts).
  const scratch = await makeScratchDir();
  const dir = scratch.path;
  const closers: Array<() => Promise<void>> = [() => scratch.remove()];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const uploaded = options.uploaded;
    const scriptModule = uploaded ? uploaded.mainModule : moduleName(script.main);
    const tailHeader = `x-edgeport-tail-${randomBytes(8).toString('hex')}`;
    const marks = { failureHeader: `x-edgeport-failure-${randomBytes(8).toString('hex')}`, probeHeader: `x-edgeport-probe-${randomBytes(8).toString('hex')}`, ...(options.tail ? { tailHeader } : {}) };
    let tailSocket: string | undefined;
    const scriptSocket = join(dir, 'script.sock');
    let storeSocket: string | undefined;
    let modules: WorkerdModule[] | undefined;
    const vars: WorkerdVar[] = [];
    if (uploaded) {
      // Each in a file of edgeport's naming: module names are the client's, and may hold any path.
      modules = [];
      for (const [index, module] of uploaded.modules.entries()) {
        const file = `module-${index}`;
        await writeFile(join(dir, file), module.content);
        modules.push({ name: module.name, kind: module.kind, file });
      }
      for (const [index, binding] of uploaded.vars.entries()) {
        const file = `var-${index}`;
        await writeFile(join(dir, file), binding.value);
        vars.push({ name: binding.name, kind: binding.kind, file });
      }
    } else {
      await writeFile(join(dir, scriptModule), await bundleScript(script.name, script.main));
    }
    await writeFile(join(dir, CONFIG_FILES.entry), entryModuleSource(scriptModule, marks));
    await writeFile(join(dir, CONFIG_FILES.cache), await bundleModule(new URL('cache-service.ts', INSIDE).pathname));
    if (script.storeBuckets.length > 0) {
      const engine = await storeEngine(options, closers);
      const buckets = accountStore(engine, options.accountId);
      // A configured script's buckets are made for it; an uploaded one's must exist (checked at upload,
      // 10085): a bucket deleted since stays deleted, and its binding's calls fail as on the platform.
      if (!uploaded) for (const { bucketName } of script.storeBuckets) await buckets.ensureBucket(bucketName);
      storeSocket = join(dir, 'store.sock');
      const service: StoreService = await startStoreService({
        engine: buckets, blobs: engineBlobs(buckets), buckets: new Set(script.storeBuckets.map(({ bucketName }) => bucketName)), socketPath: storeSocket, logger, scriptName: script.name,
      });
      closers.push(() => service.close());
      await writeFile(join(dir, CONFIG_FILES.storeBinding), await bundleModule(new URL('store-binding.ts', INSIDE).pathname));
    }
    const tail = options.tail;
    if (tail) {
      tailSocket = join(dir, 'tail.sock');
      const sink = await startTailSink(tailSocket, (event) => tail.publish(event), logger, script.name);
      closers.push(() => sink.close());
      await writeFile(join(dir, CONFIG_FILES.tail), tailModuleSource(tailHeader, script.name));
    }
    // One per script, across workerd restarts; its summary of dropped lines is logged when the script stops.
    const output = new ScriptOutputLog({ logger, scriptName: script.name, accountId: options.accountId });
    closers.push(async () => output.close());
    const configFile = join(dir, 'config.capnp');
    await writeFile(configFile, workerdConfig({
      script, scriptModule, scriptSocket, storeSocket, internalCompatibilityDate: '2025-01-01', ...(modules ? { modules } : {}), vars,
      ...(tailSocket === undefined ? {} : { tailSocket }),
    }));
    const supervisor = await WorkerdSupervisor.start({
      scriptName: script.name, configFile, cwd: dir, socketPath: scriptSocket, probeHeader: marks.probeHeader, cpuMs: script.limits.cpuMs, logger, output,
    }).catch((error: unknown) => {
      throw new RuntimeError('RUNTIME_SCRIPT_START_FAILED', `Script ${JSON.stringify(script.name)} (${script.main}) failed to start in workerd ${WORKERD.version}: ${(error as Error).message}`, { cause: error });
    });
    closers.push(() => supervisor.close());
    const context = { supervisor, socketPath: scriptSocket, failureHeader: marks.failureHeader, output,
      ...(tail ? { tail: { header: tailHeader, watched: () => tail.watched() } } : {}) };
    return {
      handle: function handleScriptRequest(req, res) {
        proxyToWorkerd(context, req, res);
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
    dataDir: options.dataDir, blobsUrl: options.blobsUrl, logger: options.logger, recover: true, maintenance: true, backgroundCheckpoints: true,
    ...(options.dbUrl === undefined ? {} : { database: await (await import('../../db/postgres/pg-database.ts')).PgDatabase.open({ url: options.dbUrl, now: Date.now() }) }),
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
    throw new RuntimeError('RUNTIME_SCRIPT_START_FAILED', `Script ${JSON.stringify(name)} (${main}) cannot be bundled for workerd:\n${bundleErrorMessage(error)}`, { cause: error });
  }
}
