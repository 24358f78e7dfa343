/**
 * The two things the API itself writes to a log destination: the ownership challenge file
 * (`ownership-challenge.txt` holding the token) for file:// and store:// destinations, and the
 * test upload that validates an http(s):// destination before a job is created (the real service
 * POSTs a gzipped `{"content":"tests"}` and refuses the job when the endpoint rejects it).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { accountStore } from '../../store/engine/account-store.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { challengeLocation, type Destination } from '../../logs/index.ts';

export const CHALLENGE_FILENAME = 'ownership-challenge.txt';

export interface DestinationIo {
  /**
   * Writes the token for the account; resolves to the file's name as shown to the user, or rejects
   * with a reason. A store:// destination names a bucket of that account.
   */
  writeChallenge(destination: Destination, token: string, accountId: string): Promise<string>;
  /** Resolves when an http(s) destination accepts a test upload; rejects otherwise. */
  probe(destination: Destination): Promise<void>;
}

export interface DestinationIoOptions {
  /** The object store, for store:// destinations; without it they cannot be challenged. */
  store?: StoreEngine;
  probeTimeoutMs?: number;
}

export function createDestinationIo(options: DestinationIoOptions): DestinationIo {
  const timeoutMs = options.probeTimeoutMs ?? 10_000;
  return {
    async writeChallenge(destination, token, accountId) {
      const location = challengeLocation(destination);
      if (destination.scheme === 'file') {
        const directory = location.slice('file://'.length);
        await mkdir(directory, { recursive: true });
        const file = join(directory, CHALLENGE_FILENAME);
        await writeFile(file, token);
        return file;
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

    async probe(destination) {
      if (destination.scheme !== 'http' && destination.scheme !== 'https') return;
      const response = await fetch(destination.url, {
        method: 'POST',
        headers: { ...destination.headers, 'content-type': 'application/json', 'content-encoding': 'gzip', 'user-agent': 'edgeport-logshipping/1.0' },
        body: gzipSync(JSON.stringify({ content: 'tests' })),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the destination answered ${response.status}`);
    },
  };
}
