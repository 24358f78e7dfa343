/**
 * The two things the API itself writes to a log destination: the ownership challenge file
 * (`ownership-challenge.txt` holding the token) for file:// and store:// destinations, and the
 * test upload that validates an http(s):// destination before a job is created (the real service
 * POSTs a gzipped `{"content":"tests"}` and refuses the job when the endpoint rejects it). Also
 * where file:// destinations may point (the file roots), which the routes check.
 */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { accountStore } from '../../store/engine/account-store.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import type { OutboundGuard } from '../../core/net/outbound-guard.ts';
import { challengeLocation, FileRoots, guardedPoster, type Destination } from '../../logs/index.ts';

export const CHALLENGE_FILENAME = 'ownership-challenge.txt';

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
   * Resolves when an http(s) destination accepts a test upload; rejects otherwise. `guard` limits
   * where the upload may connect (null: anywhere, for the operator's zones).
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
        if (realDirectory === undefined) throw new Error('the destination\'s directory was not checked against the file roots');
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
        await accountStore(options.store, accountId).put(destination.bucket, key, new TextEncoder().encode(token), { httpMetadata: { contentType: 'text/plain' } });
        return `${destination.bucket}/${key}`;
      }
      throw new Error(`${destination.scheme} destinations need no ownership challenge`);
    },

    async probe(destination, guard) {
      if (destination.scheme !== 'http' && destination.scheme !== 'https') return;
      const poster = guardedPoster(new URL(destination.url), guard);
      try {
        const response = await poster.post({
          headers: { ...destination.headers, 'content-type': 'application/json', 'content-encoding': 'gzip', 'user-agent': 'edgeport-logshipping/1.0' },
          body: gzipSync(JSON.stringify({ content: 'tests' })),
          timeoutMs,
        });
        await response.body?.cancel();
        if (!response.ok) throw new Error(`the destination answered ${response.status}`);
      } finally {
        await poster.close();
      }
    },
  };
}
