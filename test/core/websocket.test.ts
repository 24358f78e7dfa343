/**
 * The WebSocket server over a real socket (acceptWebSocket behind node:http's 'upgrade'): a client
 * that breaks RFC 6455 gets a close frame with the RFC's code and the connection ends; pings are
 * answered and a close is echoed; a client that does not read is bounded: its events close it with
 * 1008 once too much is unread, its pings stop being read (the socket is paused, so it fills its
 * own buffers, not ours) and it is closed with 1008 once its output stalls; bad handshakes are refused.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import { acceptWebSocket, type CloseCause, type ServerWebSocket, type WebSocketLimits } from '../../src/core/http/websocket.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { openRaw } from '../helpers/raw-connections.ts';
import { clientFrame, closeCodeOf, closePayload, openWebSocket, readToEnd, serverFrames } from '../helpers/websocket-client.ts';

interface Served {
  url: string;
  port: number;
  /** The server side of each accepted connection, and how it ended. */
  sockets: Array<{ ws: ServerWebSocket; cause: Promise<CloseCause> }>;
}

async function serve(t: TestContext, limits: Partial<WebSocketLimits> = {}): Promise<Served> {
  const sockets: Served['sockets'] = [];
  const server = createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => {
    if (head.length > 0) socket.unshift(head);
    const ws = acceptWebSocket(req, socket, 'trace-v1', { closeGraceMs: 2_000, ...limits });
    if (ws) sockets.push({ ws, cause: new Promise((resolve) => ws.onClose(resolve)) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestEnd(
    t,
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { url: `ws://127.0.0.1:${port}/tail`, port, sockets };
}

async function connected(t: TestContext, served: Served): Promise<{ socket: Socket; head: Buffer }> {
  const client = await openWebSocket(served.url);
  onTestEnd(t, () => client.socket.destroy());
  return client;
}

const MUST_FAIL: Array<[string, Buffer, number, CloseCause]> = [
  ['ping of 126 bytes', clientFrame({ opcode: 0x9, payload: Buffer.alloc(126) }), 1002, 'protocol_error'],
  ['fragmented ping', clientFrame({ opcode: 0x9, fin: false, payload: Buffer.from('p') }), 1002, 'protocol_error'],
  [
    'invalid UTF-8 across fragments',
    Buffer.concat([
      clientFrame({ opcode: 0x1, fin: false, payload: Buffer.from([0x61, 0xe2]) }),
      clientFrame({ opcode: 0x0, payload: Buffer.from([0x28, 0xa1]) }),
    ]),
    1007,
    'protocol_error',
  ],
  ['invalid UTF-8 close reason', clientFrame({ opcode: 0x8, payload: closePayload(1000, Buffer.from([0xc0, 0x80])) }), 1007, 'protocol_error'],
  ['RSV1 set', clientFrame({ opcode: 0x1, rsv: 4, payload: Buffer.from('x') }), 1002, 'protocol_error'],
  ['reserved opcode 0xB', clientFrame({ opcode: 0xb, payload: Buffer.alloc(0) }), 1002, 'protocol_error'],
  ['continuation without a start', clientFrame({ opcode: 0x0, payload: Buffer.from('x') }), 1002, 'protocol_error'],
  [
    'text while a fragmented message is open',
    Buffer.concat([clientFrame({ opcode: 0x2, fin: false, payload: Buffer.from('x') }), clientFrame({ opcode: 0x1, payload: Buffer.from('y') })]),
    1002,
    'protocol_error',
  ],
  ['unmasked binary frame', clientFrame({ opcode: 0x2, payload: Buffer.from('x'), mask: null }), 1002, 'protocol_error'],
  ['close code 1005', clientFrame({ opcode: 0x8, payload: closePayload(1005) }), 1002, 'protocol_error'],
  ['close code 2999', clientFrame({ opcode: 0x8, payload: closePayload(2999) }), 1002, 'protocol_error'],
  ['message over the limit', clientFrame({ opcode: 0x2, payload: Buffer.alloc(4097) }), 1009, 'message_too_big'],
];

test('each frame RFC 6455 says must fail the connection: a close frame with its code, then the connection ends', { timeout: 60_000 }, async (t) => {
  const served = await serve(t, { maxMessageBytes: 4096 });
  for (const [name, bytes, code, cause] of MUST_FAIL) {
    const { socket, head } = await connected(t, served);
    // A valid ping first: answered before the bad frame fails the connection.
    socket.write(
      Buffer.concat([clientFrame({ opcode: 0x9, payload: Buffer.from('before') }), bytes, clientFrame({ opcode: 0x9, payload: Buffer.from('after') })]),
    );
    const { data, ended } = await readToEnd(socket, head);
    const { frames } = serverFrames(data);
    assert.deepEqual(
      frames.map((each) => each.opcode),
      [0xa, 0x8],
      name,
    );
    assert.equal(frames[0]!.payload.toString(), 'before', name);
    assert.equal(closeCodeOf(frames), code, name);
    assert.equal(ended, 'end', `${name}: the server ended the connection`);
    assert.equal(await served.sockets.at(-1)!.cause, cause, name);
  }
});

test(
  'valid traffic: the unmasked first text (wrangler), a fragmented text with a ping between, then a close with a reason is echoed',
  { timeout: 30_000 },
  async (t) => {
    const served = await serve(t);
    const { socket, head } = await connected(t, served);
    socket.write(
      Buffer.concat([
        clientFrame({ opcode: 0x1, payload: Buffer.from('{"debug":false}'), mask: null }),
        clientFrame({ opcode: 0x1, fin: false, payload: Buffer.from('Hel') }),
        clientFrame({ opcode: 0x9, payload: Buffer.from('ping ✓') }),
        clientFrame({ opcode: 0x0, payload: Buffer.from('lo') }),
        clientFrame({ opcode: 0x8, payload: closePayload(4001, 'done ✓') }),
      ]),
    );
    const { data, ended } = await readToEnd(socket, head);
    const { frames } = serverFrames(data);
    assert.deepEqual(
      frames.map((each) => [each.opcode, each.payload.toString()]),
      [
        [0xa, 'ping ✓'],
        [0x8, closePayload(4001).toString()],
      ],
    );
    assert.equal(ended, 'end');
    assert.equal(await served.sockets[0]!.cause, 'peer');
  },
);

test(
  'a client that never reads its events: closed with 1008 once they pass maxBufferedBytes; what it was sent waits for it, close frame last',
  { timeout: 60_000 },
  async (t) => {
    const served = await serve(t, { maxBufferedBytes: 256 * 1024 });
    const { socket, head } = await connected(t, served);
    const { ws } = served.sockets[0]!;
    const event = JSON.stringify({ logs: ['x'.repeat(1000)] });
    let sent = 0;
    let peak = 0;
    // Loopback's socket buffers take megabytes first; the bound applies to what Node holds beyond them.
    while (ws.sendText(event)) {
      sent += 1;
      peak = Math.max(peak, ws.bufferedBytes);
      if (sent % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
      assert.ok(sent < 1_000_000, 'the socket was never closed');
    }
    assert.ok(peak <= 256 * 1024, `held ${peak} bytes`);
    assert.equal(await served.sockets[0]!.cause, 'slow_reader');
    assert.equal(ws.sendText(event), false, 'nothing more is queued');
    const { data } = await readToEnd(socket, head);
    const { frames } = serverFrames(data);
    assert.equal(frames.filter((each) => each.opcode === 0x1).length, sent, 'every event queued before the close arrives');
    assert.equal(frames.at(-1)!.opcode, 0x8);
    assert.equal(closeCodeOf(frames), 1008);
    console.log(`events queued before the close: ${sent} (${((sent * event.length) / 1048576).toFixed(1)} MiB), peak held ${peak} bytes`);
  },
);

test(
  'a client that pings and never reads: its socket is paused (it cannot send more), then closed with 1008 once its output stalls',
  { timeout: 60_000 },
  async (t) => {
    const served = await serve(t, { pauseBufferedBytes: 64 * 1024, stalledMs: 1_000 });
    const { socket, head } = await connected(t, served);
    const { ws } = served.sockets[0]!;
    const pings = Buffer.concat(Array.from({ length: 512 }, () => clientFrame({ opcode: 0x9, payload: Buffer.alloc(125, 0x70) })));
    let accepted = 0;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, ws.bufferedBytes);
    }, 5);
    // Writes until the socket stops taking them for half a second (the server no longer reads).
    for (;;) {
      const drained = new Promise<boolean>((resolve) => {
        if (
          socket.write(pings, () => {
            accepted += pings.length;
          })
        )
          resolve(true);
        else {
          const timer = setTimeout(() => resolve(false), 500);
          socket.once('drain', () => {
            clearTimeout(timer);
            resolve(true);
          });
        }
      });
      if (!(await drained)) break;
      assert.ok(accepted < 1024 ** 3, 'the server kept reading 1 GiB of pings it could not answer');
    }
    assert.equal(await served.sockets[0]!.cause, 'slow_reader');
    clearInterval(sampler);
    assert.ok(peak < 64 * 1024 + 256 * 1024, `held ${peak} bytes`);
    const { data } = await readToEnd(socket, head);
    const { frames } = serverFrames(data);
    assert.equal(closeCodeOf(frames), 1008);
    console.log(
      `ping bytes the server took before pausing: ${accepted}; pongs received: ${frames.length - 1}; peak held ${peak} bytes; close ${closeCodeOf(frames)}`,
    );
  },
);

test('handshakes that are no WebSocket upgrade are refused: wrong method, a body, a bad key, another version (426)', { timeout: 30_000 }, async (t) => {
  const served = await serve(t);
  const head = (lines: string[]) => `${['Host: x', 'Connection: Upgrade', 'Upgrade: websocket', ...lines].join('\r\n')}\r\n\r\n`;
  const key = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==';
  const cases: Array<[string, RegExp]> = [
    [`POST /tail HTTP/1.1\r\n${head([key, 'Sec-WebSocket-Version: 13', 'Content-Length: 0'])}`, /^HTTP\/1\.1 400 /],
    [`GET /tail HTTP/1.1\r\n${head([key, 'Sec-WebSocket-Version: 13', 'Transfer-Encoding: chunked'])}0\r\n\r\n`, /^HTTP\/1\.1 400 [^]*may not carry a body/],
    [`GET /tail HTTP/1.1\r\n${head(['Sec-WebSocket-Key: short', 'Sec-WebSocket-Version: 13'])}`, /^HTTP\/1\.1 400 [^]*Sec-WebSocket-Key/],
    [`GET /tail HTTP/1.1\r\n${head([key, 'Sec-WebSocket-Version: 8'])}`, /^HTTP\/1\.1 426 [^]*Sec-WebSocket-Version: 13\r\n/],
  ];
  for (const [raw, answer] of cases) {
    const connection = await openRaw(served.port, { send: raw });
    const { text } = await connection.closed;
    assert.match(text, answer, raw);
  }
  assert.equal(served.sockets.length, 0);
});
