/** Starts a gateway service behind a real node:http listener on 127.0.0.1:0; stopped by the test. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { FakeClock, type Clock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';
import { gatewaySectionSchema, toGatewayConfig, type GatewaySection } from '../../src/config/gateway.ts';
import { createGatewayService, type GatewayService } from '../../src/gateway/index.ts';

export interface RunningGateway {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  service: GatewayService;
  /** POSTs `body` (a string is sent as is, anything else as JSON) to `path`. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Stops the listener and the service (also done when the test ends). */
  stop(): Promise<void>;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is empty. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON-RPC shapes
}

export interface StartGatewayOptions {
  /** The `[gateway]` section, as in edgeport.toml (validated by the real schema). */
  section?: GatewaySection;
  clock?: Clock;
  dataDir?: string;
}

export async function startGateway(t: TestContext, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const networks = toGatewayConfig(gatewaySectionSchema.parse(options.section ?? {}));
  const service = await createGatewayService({
    networks,
    clock: options.clock ?? new FakeClock(),
    logger: silentLogger,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  const server = createServer(service.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
    })();
    return stopped;
  };
  t.after(stop);
  return {
    origin,
    service,
    stop,
    async post(path, body, headers = { 'content-type': 'application/json' }) {
      const response = await fetch(`${origin}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, json: text === '' ? undefined : JSON.parse(text) };
    },
  };
}

/** A JSON-RPC 2.0 request object. */
export function rpc(method: string, params: unknown[] = [], id: unknown = 1): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params };
}

/** Polls `condition` every 5 ms until it holds (at most `timeoutMs`). */
export async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
