/**
 * A TCP proxy a test can cut: edgeport connects to the proxy's port instead of a backend's (the
 * shared PostgreSQL at 127.0.0.1:5432, which a test must never stop), and the test makes the
 * backend vanish for edgeport alone: `cut('reset')` drops every connection and resets new ones at
 * once (a server that is down or restarting), `cut('blackhole')` keeps them open and forwards
 * nothing either way (a network partition, a server that hangs); `restore()` forwards again.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export interface TcpProxy {
  readonly port: number;
  cut(how: 'reset' | 'blackhole'): void;
  restore(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
}

export async function startTcpProxy(t: TestContext, target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'open' | 'reset' | 'blackhole' = 'open';
  let accepted = 0;
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  const server = createServer((client) => {
    accepted += 1;
    const pair: { client: Socket; upstream: Socket | null } = { client, upstream: null };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (mode === 'reset') return void client.resetAndDestroy();
    if (mode === 'blackhole') return void client.pause();
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream?.destroy();
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as AddressInfo).port,
    get accepted() {
      return accepted;
    },
    cut(how) {
      mode = how;
      for (const pair of pairs) {
        if (how === 'reset') {
          pair.client.resetAndDestroy();
          pair.upstream?.destroy();
        } else {
          // Nothing moves either way any more; the sockets stay open, as across a partition.
          pair.client.unpipe();
          pair.upstream?.unpipe();
          pair.client.pause();
          pair.upstream?.pause();
        }
      }
    },
    restore() {
      mode = 'open';
      // Connections cut off mid-conversation cannot resume (bytes were dropped): they go, and clients reconnect.
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
    },
  };
}
