/**
 * A stand-in Ethereum node for upstream tests (erpc's test/fake_server.go): answers a few methods,
 * records every call, and can be told to fail (HTTP status), to stall (latency) or to answer with
 * a JSON-RPC error. `deadUrl()` gives an address where nothing listens.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export interface UpstreamCall {
  method: string;
  params: unknown[];
}

export interface FakeUpstream {
  url: string;
  calls: UpstreamCall[];
  /** Knobs, changeable while running. */
  behaviour: {
    /** Answer every request with this HTTP status (and a text body) instead of JSON-RPC. */
    status?: number;
    /** Milliseconds to wait before answering. */
    delayMs?: number;
    /** A JSON-RPC error object to answer instead of a result. */
    error?: { code: number; message: string; data?: unknown };
  };
  /** The block number answered for `finalized` and `eth_blockNumber`. */
  head: number;
  /** Answered to web3_clientVersion: tells which node answered. */
  clientVersion: string;
  callsOf(method: string): UpstreamCall[];
}

const TX_HASH = `0x${'ab'.repeat(32)}`;

export async function startFakeUpstream(t: TestContext, chainId = 11155111): Promise<FakeUpstream> {
  const upstream: FakeUpstream = {
    url: '',
    calls: [],
    behaviour: {},
    head: 0x10,
    clientVersion: 'fake/1.0',
    callsOf: (method) => upstream.calls.filter((c) => c.method === method),
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const request = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
      upstream.calls.push({ method: request.method, params: request.params });
      const answer = () => {
        const { status, error } = upstream.behaviour;
        if (status !== undefined) {
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end('upstream trouble at 10.0.0.7');
          return;
        }
        const payload = error ? { error } : { result: resultOf(request.method, request.params, upstream, chainId) };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...payload }));
      };
      if (upstream.behaviour.delayMs) setTimeout(answer, upstream.behaviour.delayMs);
      else answer();
    });
  });
  await listen(server);
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc?key=secret-api-key`;
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return upstream;
}

function resultOf(method: string, params: unknown[], { head, clientVersion }: FakeUpstream, chainId: number): unknown {
  const hex = (n: number) => `0x${n.toString(16)}`;
  switch (method) {
    case 'web3_clientVersion':
      return clientVersion;
    case 'eth_chainId':
      return hex(chainId);
    case 'eth_blockNumber':
      return hex(head);
    case 'eth_getBlockByNumber': {
      const tag = params[0];
      const number = tag === 'finalized' || tag === 'latest' ? head : Number(tag);
      return number > head ? null : { number: hex(number), hash: `0x${number.toString(16).padStart(64, '0')}`, transactions: [] };
    }
    case 'eth_getTransactionReceipt':
      return { transactionHash: params[0], blockNumber: hex(head - 1), status: '0x1' };
    case 'eth_sendRawTransaction':
      return TX_HASH;
    default:
      return null;
  }
}

/** A URL on 127.0.0.1 where a listener was just closed: connections are refused. */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  await listen(server);
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/`;
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
