/**
 * Clients that close their connection before their answer (mid-body, or while the route runs) are
 * no server fault: the management API logs them at debug level, never as errors, and keeps serving.
 * The app is served as `edgeport start` serves it (@hono/node-server's listener over its fetch), and
 * the test waits until the app has finished with every request it got, not for a fixed time.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { getRequestListener } from '@hono/node-server';
import { pino } from 'pino';
import { createAccount, createApiService } from '../../src/api/index.ts';
import { FileRoots } from '../../src/logs/index.ts';
import { AccessKeys } from '../../src/store/s3/access-keys.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { openTestControlStore } from '../helpers/control-store.ts';
import { openTestEngine } from '../helpers/engine.ts';
import { testScryptThread } from '../helpers/scrypt-thread.ts';

test('requests whose clients disconnect mid-body or mid-route are logged at debug, never as errors', { timeout: 60_000 }, async (t) => {
  const { engine, clock, dataDir, database } = await openTestEngine(t);
  const control = await openTestControlStore(t, { dataDir, clock, database });
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
  const scrypt = testScryptThread(t);
  const service = await createApiService({
    control,
    accessKeys: new AccessKeys(engine.metadata, clock),
    clock,
    logger,
    store: engine,
    fileRoots: new FileRoots({ roots: [tmpdir()], dataDir }),
    scrypt,
  });
  // Settled once every connection the clients opened has closed on the server's side (so every
  // request that reached it has begun: a reset can come before a head is read) and the app has
  // finished with each request that began (answered, or given up on when its client left).
  const expected = 60;
  const count = { connections: 0, closed: 0, started: 0, finished: 0 };
  let check: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    check = () => {
      if (count.connections === expected && count.closed === expected && count.finished === count.started) resolve();
    };
  });
  const listener = getRequestListener((request) => service.fetch(request), { overrideGlobalObjects: false });
  const server = createServer((req, res) => {
    count.started += 1;
    void listener(req, res).finally(() => {
      count.finished += 1;
      check();
    });
  });
  server.on('connection', (socket) => {
    count.connections += 1;
    socket.once('close', () => {
      count.closed += 1;
      check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestEnd(t, async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.close();
  });
  const port = (server.address() as AddressInfo).port;
  const { key } = await createAccount(control, 'admin@example.com', { clock, scrypt });
  const auth = `X-Auth-Email: admin@example.com\r\nX-Auth-Key: ${key}\r\n`;
  const heads = [
    // Half a JSON body, then gone.
    `POST /client/v4/zones HTTP/1.1\r\nHost: api\r\n${auth}Content-Type: application/json\r\nContent-Length: 400\r\n\r\n{"name": "gone.test", `,
    `PUT /client/v4/zones/${'0'.repeat(32)}/rulesets/phases/http_log_custom_fields/entrypoint HTTP/1.1\r\nHost: api\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"rules": [{"ac`,
    // A whole request, then gone before the answer.
    `GET /client/v4/zones HTTP/1.1\r\nHost: api\r\n${auth}\r\n`,
  ];
  assert.equal(heads.length * 20, expected);
  for (let round = 0; round < 20; round++) {
    await Promise.all(
      heads.map(
        (head, i) =>
          new Promise<void>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => {
              socket.write(head);
              // Reset (RST) or close (FIN), after a moment or at once.
              setTimeout(() => (i % 2 === 0 ? socket.resetAndDestroy() : socket.destroy()), round % 2 === 0 ? 20 : 0);
            });
            socket.on('error', () => {
              /* our own reset */
            });
            socket.on('close', () => resolve());
          }),
      ),
    );
  }
  await settled;
  assert.ok(count.started > 0, 'requests reached the app');
  const loud = lines.filter((line) => line.level >= 40);
  assert.deepEqual(loud, [], 'no warn or error line');
  assert.ok(
    lines.some((line) => line.level === 20 && line.msg === 'Management API client disconnected before its answer.'),
    'the disconnects are at debug',
  );
  // And the API still answers.
  const response = await fetch(`http://127.0.0.1:${port}/client/v4/zones`, { headers: { 'x-auth-email': 'admin@example.com', 'x-auth-key': key } });
  assert.equal(response.status, 200);
});
