/**
 * The JSON-RPC gateway: each network with its state (served, or retired on its date with its
 * replacement), its endpoint and its request rate (calls between two readings of the networks
 * route), and a small console that POSTs JSON-RPC straight to the gateway's port (it answers
 * browsers' CORS preflights).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, seg } from '../api.ts';
import { Errors, Loading, useTitle } from '../components/common.tsx';

interface Network {
  name: string;
  chain_id: number;
  state: 'served' | 'retired';
  retired_on: string | null;
  replacement: string | null;
  backend: string;
  endpoint: string | null;
  requests_total: number;
  sampled_at: string;
}

const POLL_MS = 3000;
const METHODS = ['eth_blockNumber', 'eth_chainId', 'eth_getBlockByNumber', 'eth_getBalance', 'eth_gasPrice', 'net_version', 'web3_clientVersion'];
const EXAMPLE_PARAMS: Record<string, string> = {
  eth_getBlockByNumber: '["latest", false]',
  eth_getBalance: '["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "latest"]',
};

export function GatewayPage({ account }: { account: string }) {
  useTitle('Gateway');
  const [networks, setNetworks] = useState<Network[] | null>(null);
  const [rates, setRates] = useState<Record<string, number | null>>({});
  const [error, setError] = useState<unknown>();
  const previous = useRef<Record<string, { total: number; at: number }>>({});

  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      try {
        const list = (await call<Network[]>('GET', `/accounts/${seg(account)}/gateway/networks`)).result;
        if (stopped) return;
        const next: Record<string, number | null> = {};
        for (const n of list) {
          const at = Date.parse(n.sampled_at);
          const before = previous.current[n.name];
          next[n.name] = before && at > before.at ? ((n.requests_total - before.total) * 1000) / (at - before.at) : null;
          previous.current[n.name] = { total: n.requests_total, at };
        }
        setNetworks(list);
        setRates(next);
        setError(undefined);
      } catch (e) {
        if (!stopped) setError(e);
      }
    };
    void poll();
    const timer = setInterval(poll, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [account]);

  return (
    <>
      <h1>Gateway</h1>
      <p class="lead">
        JSON-RPC 2.0 over HTTP at <code>POST /v1/&lt;network&gt;</code>, for viem, ethers, web3 and curl.
      </p>
      <Errors error={error} title="The networks could not be read" />
      <section aria-labelledby="networks-title">
        <h2 id="networks-title">Networks</h2>
        {networks === null ? (
          error === undefined && <Loading what="networks" />
        ) : networks.length === 0 ? (
          <p class="muted">This server runs no gateway.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Network</th>
                  <th scope="col" class="numeric">
                    Chain id
                  </th>
                  <th scope="col">State</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col" class="numeric">
                    Calls
                  </th>
                  <th scope="col" class="numeric">
                    Rate
                  </th>
                </tr>
              </thead>
              <tbody>
                {networks.map((n) => (
                  <tr key={n.name}>
                    <th scope="row">{n.name}</th>
                    <td class="numeric" data-label="Chain id">
                      {n.chain_id}
                    </td>
                    <td data-label="State">
                      {n.state === 'served' ? (
                        <>
                          <span class="badge badge-ok">served</span>
                          {n.retired_on && <span class="small"> until {n.retired_on}</span>}
                          <span class="small muted"> · {n.backend === 'embedded' ? 'embedded chain' : 'upstream nodes'}</span>
                        </>
                      ) : (
                        <>
                          <span class="badge badge-bad">retired on {n.retired_on}</span>
                          {n.replacement && (
                            <span class="small">
                              {' '}
                              · use <strong>{n.replacement}</strong>
                            </span>
                          )}
                        </>
                      )}
                    </td>
                    <td data-label="Endpoint">{n.endpoint ? <code class="wrap">{n.endpoint}</code> : <span class="muted">unknown</span>}</td>
                    <td class="numeric" data-label="Calls">
                      {n.requests_total.toLocaleString()}
                    </td>
                    <td class="numeric" data-label="Rate" aria-live="off">
                      {rates[n.name] === null || rates[n.name] === undefined ? '—' : `${rates[n.name]!.toFixed(1)}/s`}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p class="help">
          Calls count JSON-RPC requests received since the server started (each batch member counts); the rate is over the last {POLL_MS / 1000} seconds.
        </p>
      </section>
      {networks && networks.length > 0 && <Console networks={networks} />}
    </>
  );
}

function Console({ networks }: { networks: Network[] }) {
  const [network, setNetwork] = useState(networks.find((n) => n.state === 'served')?.name ?? networks[0]!.name);
  const [method, setMethod] = useState('eth_blockNumber');
  const [params, setParams] = useState('[]');
  const [answer, setAnswer] = useState<{ status: number; ms: number; body: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const endpoint = networks.find((n) => n.name === network)?.endpoint ?? null;

  let paramsProblem: string | null = null;
  try {
    const parsed: unknown = JSON.parse(params);
    if (!Array.isArray(parsed)) paramsProblem = 'Params are a JSON array, e.g. ["latest", false].';
  } catch {
    paramsProblem = 'Params are not valid JSON yet.';
  }

  const send = async (event: Event) => {
    event.preventDefault();
    if (!endpoint || paramsProblem) return;
    setBusy(true);
    setProblem(null);
    const started = performance.now();
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: method.trim(), params: JSON.parse(params) as unknown }),
      });
      const text = await response.text();
      let body = text;
      try {
        body = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // Not JSON: shown as it came.
      }
      setAnswer({ status: response.status, ms: Math.round(performance.now() - started), body });
    } catch (e) {
      setProblem(`The gateway could not be reached at ${endpoint}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="console-title">
      <h2 id="console-title">JSON-RPC console</h2>
      <form class="form-grid" onSubmit={send}>
        <div class="field">
          <label for="rpc-network">Network</label>
          <select id="rpc-network" value={network} onChange={(e) => setNetwork(e.currentTarget.value)}>
            {networks.map((n) => (
              <option key={n.name} value={n.name}>
                {n.name}
                {n.state === 'retired' ? ' (retired)' : ''}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="rpc-method">Method</label>
          <input
            id="rpc-method"
            list="rpc-methods"
            value={method}
            spellcheck={false}
            onInput={(e) => {
              const value = e.currentTarget.value;
              setMethod(value);
              const example = EXAMPLE_PARAMS[value];
              if (example && params.trim() === '[]') setParams(example);
            }}
          />
          <datalist id="rpc-methods">
            {METHODS.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </div>
        <div class="field field-wide">
          <label for="rpc-params">Params (JSON array)</label>
          <textarea
            id="rpc-params"
            rows={3}
            value={params}
            spellcheck={false}
            aria-describedby="rpc-params-help"
            aria-invalid={paramsProblem ? true : undefined}
            onInput={(e) => setParams(e.currentTarget.value)}
          />
          <p id="rpc-params-help" class={paramsProblem ? 'field-problem' : 'help'}>
            {paramsProblem ?? (
              <>
                Sent to <code>{endpoint ?? 'an unknown endpoint'}</code>.
              </>
            )}
          </p>
        </div>
        <div class="form-actions">
          <button type="submit" class="button-primary" disabled={busy || !endpoint || paramsProblem !== null}>
            Send
          </button>
        </div>
      </form>
      {problem && (
        <p class="notice notice-error" role="alert">
          {problem}
        </p>
      )}
      {answer && (
        <div class="rpc-answer">
          <p class="small" role="status">
            HTTP {answer.status} in {answer.ms} ms
          </p>
          <pre tabIndex={0} aria-label="JSON-RPC answer">
            {answer.body}
          </pre>
        </div>
      )}
    </section>
  );
}
