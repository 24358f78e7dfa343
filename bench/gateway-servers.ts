/**
 * The servers `npm run bench gateway` compares, each run as a child process of the bench (so it
 * can be pinned to a core): `edgeport <source root> <[gateway] section as JSON>` serves the
 * gateway of that source tree (this checkout, or another one to compare with), `bare <answers
 * file>` is node:http answering each known request body with a fixed response. Each prints its
 * URL on stdout and stops on SIGTERM or when the bench's end of stdin closes. The answers file maps
 * bodies to responses; its `*` entry answers any other body.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

async function serveEdgeport(root: string, sectionJson: string): Promise<{ server: Server; close(): Promise<void> }> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const [{ systemClock }, { silentLogger }, { gatewaySectionSchema, toGatewayConfig }, { createGatewayService }] = await Promise.all([
    load('src/core/clock.ts'),
    load('src/core/log.ts'),
    load('src/config/gateway.ts'),
    load('src/gateway/index.ts'),
  ]);
  const service = await createGatewayService({
    networks: toGatewayConfig(gatewaySectionSchema.parse(JSON.parse(sectionJson))),
    clock: systemClock,
    logger: silentLogger,
  });
  const server = createServer(service.handler);
  return { server, close: () => service.close() };
}

function serveBare(answersFile: string): { server: Server; close(): Promise<void> } {
  const answers = new Map(
    Object.entries(JSON.parse(readFileSync(answersFile, 'utf8')) as Record<string, string>).map(([body, text]) => [body, Buffer.from(text)]),
  );
  const unknown = answers.get('*') ?? Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"unknown body"}}');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = answers.get(Buffer.concat(chunks).toString()) ?? unknown;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
  });
  return { server, close: async () => {} };
}

const [mode, ...args] = process.argv.slice(2);
const served = mode === 'edgeport' ? await serveEdgeport(args[0]!, args[1]!) : mode === 'bare' ? serveBare(args[0]!) : undefined;
if (served === undefined) throw new Error(`usage: gateway-servers.ts edgeport <root> <section json> | bare <answers file>; got ${mode}`);
served.server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => served.server.listen(0, '127.0.0.1', resolve));
process.stdout.write(`http://127.0.0.1:${(served.server.address() as AddressInfo).port}\n`);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  served.server.closeAllConnections();
  served.server.close();
  // process.exit (not a signal's default) so that --cpu-prof writes its profile.
  void served.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop).resume();
