/** Starts the real `edgeport start` CLI on free ports and reads its banner (tests and benchmarks). */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface EdgeportServer {
  child: ChildProcess;
  /** Everything printed to stdout up to the ready line. */
  banner: string;
  /** Listener URLs by banner label, e.g. `urls['S3-compatible API']`. */
  urls: Record<string, string>;
  /** The S3 key printed on first start, if one was generated. */
  s3Key: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface StartOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
}

/** Resolves once the server prints its ready line; rejects with its output if it exits first. */
export async function startEdgeport(options: StartOptions): Promise<EdgeportServer> {
  const ports = ['--edge-port', '0', '--api-port', '0', '--gateway-port', '0', '--s3-port', '0'];
  const child = spawn(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'start', '--data-dir', options.dataDir, ...ports, ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EDGEPORT_LOG_LEVEL: 'warn', ...options.env },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const banner = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (/; ready\n/.test(seen)) resolve(seen);
    });
    child.once('exit', (code) => reject(new Error(`edgeport start exited with ${code}:\n${seen}${stderr}`)));
  });
  child.stdout!.resume();
  const urls: Record<string, string> = {};
  for (const match of banner.matchAll(/^edgeport: (.+) at (http:\/\/\S+)$/gm)) urls[match[1]!] = match[2]!;
  const id = /access key id: +(\S+)/.exec(banner)?.[1];
  const secret = /secret access key: +(\S+)/.exec(banner)?.[1];
  return {
    child, banner, urls,
    s3Key: id && secret ? { accessKeyId: id, secretAccessKey: secret } : undefined,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Writes `<name>.mjs` and an edgeport.toml that routes it and binds `bucket` as env.BUCKET, both in
 * `dir`; returns the `--config` arguments for `startEdgeport`.
 */
export function writeScriptConfig(dir: string, script: { name: string; source: string; route: string; bucket: string }): string[] {
  writeFileSync(join(dir, `${script.name}.mjs`), script.source);
  writeFileSync(join(dir, 'edgeport.toml'), `[[scripts]]
name = "${script.name}"
main = "${script.name}.mjs"
compatibility_date = "2025-01-01"
routes = ["${script.route}"]
store_buckets = [{ binding = "BUCKET", bucket_name = "${script.bucket}" }]
`);
  return ['--config', join(dir, 'edgeport.toml')];
}
