/**
 * Upgrades to h2c (what `curl --http2` offers over http://) are requests like any other: which
 * Upgrade headers ask for h2c alone, and how a server whose 'upgrade' event receives one (Node
 * before 22.21 / 24.9, where the listener cannot keep it a request) still answers it over HTTP/1.1:
 * a real server with an 'upgrade' listener and no shouldUpgradeCallback, driven by the real curl.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { asksOnlyForH2c, serveUpgradeAsHttp1 } from '../../src/core/http/h2c.ts';
import { listen } from '../helpers/listen.ts';
import { bodyOf, headerOf, openRaw, statusOf } from '../helpers/raw-connections.ts';

const run = promisify(execFile);

test('asksOnlyForH2c: h2c alone, in any case and spacing; anything naming another protocol is no h2c request', { timeout: 10_000 }, () => {
  for (const upgrade of ['h2c', 'H2C', ' h2c ', 'h2c, h2c']) assert.equal(asksOnlyForH2c({ upgrade }), true, upgrade);
  for (const upgrade of [undefined, '', 'websocket', 'h2c, websocket', 'websocket, h2c', 'h2', 'h2c/1'])
    assert.equal(asksOnlyForH2c({ upgrade }), false, upgrade);
});

test(
  "an h2c upgrade handed to the 'upgrade' event is served over HTTP/1.1, then closed; one with a body is refused with 400",
  { timeout: 30_000 },
  async (t) => {
    const served: string[] = [];
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      served.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.end(`answered ${req.url} over HTTP/${req.httpVersion}`));
    };
    // No shouldUpgradeCallback: with an 'upgrade' listener, Node hands every upgrade to it, as before 22.21 / 24.9.
    const server = createServer(handler);
    server.on('upgrade', (req: IncomingMessage, socket, _head: Buffer) => {
      if (asksOnlyForH2c(req.headers)) serveUpgradeAsHttp1(req, socket, handler);
      else socket.destroy();
    });
    const port = await listen(server, t);

    const { stdout, stderr } = await run(
      'curl',
      ['-s', '-v', '--http2', '--max-time', '10', '-w', '\n%{http_code} %{http_version}', `http://127.0.0.1:${port}/curl`],
      {
        timeout: 20_000,
      },
    );
    assert.match(stderr, /^> Upgrade: h2c\r?$/im, 'curl offered h2c');
    assert.equal(stdout, 'answered /curl over HTTP/1.1\n200 1.1');

    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
    const bodiless = await (await openRaw(port, { send: `GET /raw HTTP/1.1\r\nHost: x\r\n${h2c}\r\n` })).closed;
    assert.equal(statusOf(bodiless.text), 200, bodiless.text);
    assert.equal(bodyOf(bodiless.text), 'answered /raw over HTTP/1.1');
    assert.equal(headerOf(bodiless.text, 'connection'), 'close');
    assert.ok(bodiless.afterMs < 5_000, `closed after ${Math.round(bodiless.afterMs)} ms`);

    const withBody = await (await openRaw(port, { send: `POST /body HTTP/1.1\r\nHost: x\r\n${h2c}Content-Length: 5\r\n\r\nhello` })).closed;
    assert.equal(statusOf(withBody.text), 400, withBody.text);
    assert.match(withBody.text, /cannot read the body of an Upgrade: h2c request: send it without Upgrade \(curl: --http1\.1\)/);
    assert.deepEqual(served, ['GET /curl', 'GET /raw'], 'the refused one never reached the handler');
  },
);
