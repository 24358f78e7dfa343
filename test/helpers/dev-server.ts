/** Starts the real `edgeport dev` CLI on a script and waits for its ready line (tests and benchmarks). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface DevServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface DevServerOptions {
  /** Reuse a data dir (e.g. to restart after a crash); by default a fresh one is made and removed. */
  dataDir?: string;
  compatibilityDate?: string;
  extraConfig?: string;
}

export async function startDevServer(scriptPath: string, bindings: Array<{ binding: string; bucket_name: string }>,
  options: DevServerOptions = {}): Promise<DevServer> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-dev-'));
  const dataDir = options.dataDir ?? join(dir, 'data');
  const config = join(dir, 'script.toml');
  const buckets = bindings.map((b) => `[[store_buckets]]\nbinding = "${b.binding}"\nbucket_name = "${b.bucket_name}"\n`).join('\n');
  writeFileSync(config, `name = "test-script"\nmain = "${relative(dir, scriptPath)}"\ncompatibility_date = "${options.compatibilityDate ?? '2025-01-01'}"\n${options.extraConfig ?? ''}\n\n${buckets}`);
  const child = spawn(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'dev', config, '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(seen);
      if (match) resolve(match[0]);
    });
    child.once('exit', (code) => reject(new Error(`edgeport dev exited with ${code}: ${seen}`)));
  });
  child.stdout!.resume();
  return {
    url, child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
