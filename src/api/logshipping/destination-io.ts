/**
 * The two things the API itself writes to a log destination: the ownership challenge file
 * (`ownership-challenge.txt` holding the token) for file:// and store:// destinations, and the
 * test upload that validates an http(s):// or s3:// destination before a job is created (the real
 * service POSTs a gzipped `{"content":"tests"}`, or writes a test object, and refuses the job when
 * the endpoint rejects it or does not answer in time: `probeTimeoutMs`, 10 s by default). Also
 * where file:// destinations may point (the file roots), which the routes check.
 */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { accountStore } from '../../store/engine/account-store.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import type { OutboundGuard } from '../../core/net/outbound-guard.ts';
import { challengeLocation, FileRoots, fixedPath, guardedPoster, postFailure, s3Destination, type Destination } from '../../logs/index.ts';

export const CHALLENGE_FILENAME = 'ownership-challenge.txt';
/** The test object an s3:// destination must accept before its job is made (below the job's path). */
export const PROBE_OBJECT = 'edgeport-destination-test.json.gz';

export interface DestinationIo {
  /** Where file:// destinations may point (`[logs] file_roots`, never the data dir). */
  readonly fileRoots: FileRoots;
  /**
   * Writes the token for the account; resolves to the file's name as shown to the user, or rejects
   * with a reason. A store:// destination names a bucket of that account. A file:// challenge goes
   * into `realDirectory`, the destination's directory as the file roots resolved it (refused when
   * it resolves elsewhere by the time it is written).
   */
  writeChallenge(destination: Destination, token: string, accountId: string, realDirectory?: string): Promise<string>;
  /**
   * Resolves when an http(s) or s3 destination accepts a test upload; rejects with what failed
   * otherwise (no answer in time, a refused connection, the status or S3 error answered). `guard`
   * limits where the upload may connect (null: anywhere, for the operator's zones).
   */
  probe(destination: Destination, guard: OutboundGuard | null): Promise<void>;
}

export interface DestinationIoOptions {
  /** The object store, for store:// destinations; without it they cannot be challenged. */
  store?: StoreEngine;
  /** Without it, file:// destinations are refused. */
  fileRoots?: FileRoots;
  probeTimeoutMs?: number;
}

export function createDestinationIo(options: DestinationIoOptions): DestinationIo {
  const timeoutMs = options.probeTimeoutMs ?? 10_000;
  const fileRoots = options.fileRoots ?? FileRoots.none();
  return {
    fileRoots,

    async writeChallenge(destination, token, accountId, realDirectory) {
      const location = challengeLocation(destination);
      if (destination.scheme === 'file') {
        if (realDirectory === undefined) throw new Error("the destination's directory was not checked against the file roots");
        await mkdir(realDirectory, { recursive: true });
        const check = await fileRoots.check(realDirectory);
        if (!check.ok || check.realPath !== realDirectory) throw new Error('the directory changed while the challenge was being written');
        // Never through a symbolic link put in the challenge file's place.
        const file = await open(join(realDirectory, CHALLENGE_FILENAME), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW);
        try {
          await file.writeFile(token);
        } finally {
          await file.close();
        }
        return join(location.slice('file://'.length), CHALLENGE_FILENAME);
      }
      if (destination.scheme === 'store') {
        if (!options.store) throw new Error('store:// destinations are not available on this server');
        const prefix = location.slice(`store://${destination.bucket}`.length).replace(/^\//, '');
        const key = prefix ? `${prefix}/${CHALLENGE_FILENAME}` : CHALLENGE_FILENAME;
        await accountStore(options.store, accountId).put(destination.bucket, key, new TextEncoder().encode(token), {
          httpMetadata: { contentType: 'text/plain' },
        });
        return `${destination.bucket}/${key}`;
      }
      throw new Error(`${destination.scheme} destinations need no ownership challenge`);
    },

    async probe(destination, guard) {
      const body = gzipSync(JSON.stringify({ content: 'tests' }));
      if (destination.scheme === 's3') {
        const s3 = s3Destination({
          bucket: destination.bucket,
          region: destination.region,
          endpoint: destination.endpoint ?? undefined,
          accessKeyId: destination.accessKeyId,
          secretAccessKey: destination.secretAccessKey,
          guard,
          timeoutMs,
        });
        const prefix = fixedPath(destination.prefix);
        try {
          await s3.write({ name: prefix ? `${prefix}/${PROBE_OBJECT}` : PROBE_OBJECT, gzipped: body, firstTime: 0, contentType: 'application/json' });
        } finally {
          await s3.close?.();
        }
        return;
      }
      if (destination.scheme !== 'http' && destination.scheme !== 'https') return;
      const url = new URL(destination.url);
      const poster = guardedPoster(url, guard);
      try {
        let response;
        try {
          response = await poster.post({
            headers: { ...destination.headers, 'content-type': 'application/json', 'content-encoding': 'gzip', 'user-agent': 'edgeport-logshipping/1.0' },
            body,
            timeoutMs,
          });
        } catch (error) {
          const name = (error as Error).name;
          throw new Error(`POST ${url.origin}${url.pathname} failed: ${name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : postFailure(error)}`, {
            cause: error,
          });
        }
        await response.body?.cancel();
        if (!response.ok) throw new Error(`POST ${url.origin}${url.pathname} answered HTTP ${response.status}`);
      } finally {
        await poster.close();
      }
    },
  };
}
