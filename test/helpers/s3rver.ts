/**
 * s3rver (npm `s3rver`, a devDependency): a third-party S3-compatible server, for running the blob
 * store's contract and edgeport itself against an S3 that is not edgeport's own face. It lacks
 * optional calls (ListMultipartUploads answers 501, AbortMultipartUpload 405), as some stores
 * users have do. Each test gets its own, in a process of its own, on a free port, with one bucket;
 * it is stopped when the test ends. A test that needs it fails (never skips) when it cannot start.
 */
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { onTestEnd } from './cleanup.ts';
import { spawnNode, stopChild } from './child-processes.ts';
import { tempDir } from './temp-dir.ts';

const MAIN = fileURLToPath(new URL('./s3rver-main.mjs', import.meta.url));
/** s3rver's built-in account. */
export const S3RVER_KEY = 'S3RVER';

export interface S3rverInstance {
  endpoint: string;
  bucket: string;
  /** An `s3://` blobs URL for this server under `prefix`. */
  blobsUrl(prefix: string): string;
}

export async function startS3rver(t: TestContext, bucket = 'edgeport-blobs'): Promise<S3rverInstance> {
  const child = spawnNode([MAIN, tempDir(t, 'edgeport-s3rver-'), bucket]);
  onTestEnd(t, () => stopChild(child, 5_000));
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`s3rver did not start within 20 s: ${stderr}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = /^\{.*\}$/m.exec(stdout);
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line[0]) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited with ${code} before it listened: ${stderr}`));
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    blobsUrl: (prefix) => `s3://${bucket}/${prefix}?endpoint=${endpoint}&region=us-east-1&access-key-id=${S3RVER_KEY}&secret-access-key=${S3RVER_KEY}`,
  };
}
