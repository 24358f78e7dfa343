/**
 * The S3 endpoint of `npm run bench blobs`, in a process of its own (as a real blob store would
 * be): edgeport's S3 API over an engine on local disk in `argv[2]`, bucket `blobs`, key BENCHKEY.
 * Prints its URL on stdout once listening; exits on SIGTERM or when the bench goes away.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../src/core/clock.ts';
import { silentLogger } from '../src/core/log.ts';
import { openStoreEngine } from '../src/store/engine/open-store-engine.ts';
import { adminKey } from '../src/store/s3/key-grant.ts';
import { createS3Handler } from '../src/store/s3/s3-handler.ts';

const engine = await openStoreEngine({ dataDir: process.argv[2]!, recover: true, maintenance: true, backgroundCheckpoints: true });
await engine.ensureBucket('blobs');
const handler = createS3Handler({ engine, clock: systemClock, logger: silentLogger, keys: (id) => (id === 'BENCHKEY' ? adminKey('bench-secret') : undefined) });
const server = createServer((req, res) => {
  void handler(req, res);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
const stop = (): void => {
  server.closeAllConnections();
  server.close(() => void engine.close().then(() => process.exit(0)));
};
process.once('SIGTERM', stop);
// The bench's IPC channel closes when it exits, however it exits: never outlive it.
process.once('disconnect', stop);
