/**
 * Which methods the gateway serves: default-deny. The default list is the real gateway's
 * (reads plus eth_sendRawTransaction; docs/gateway.md, "Methods"); the built-in refusals
 * (signing with node-held keys, node administration, development-node controls, stateful filters)
 * can never be allowed, so an embedded chain never exposes its `hardhat_*` / `evm_*` methods.
 * Config adds to both lists; names may end in `*` to match a prefix.
 */
import { ConfigError } from '../config/load.ts';
import { gatewayError, type JsonRpcError } from './errors.ts';

/** The real gateway's supported methods. */
export const DEFAULT_ALLOWED_METHODS: readonly string[] = [
  'web3_clientVersion',
  'web3_sha3',
  'net_version',
  'net_listening',
  'eth_syncing',
  'eth_mining',
  'eth_gasPrice',
  'eth_feeHistory',
  'eth_blockNumber',
  'eth_chainId',
  'eth_getBalance',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_getCode',
  'eth_sendRawTransaction',
  'eth_call',
  'eth_estimateGas',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getLogs',
  'eth_getWork',
  'eth_getProof',
  'trace_filter',
];

/** Refused whatever the config says, each group with the reason clients are told. */
export const BUILT_IN_REFUSALS: ReadonlyArray<{ methods: readonly string[]; reason: string }> = [
  {
    methods: ['eth_sendTransaction', 'eth_sign', 'eth_signTransaction', 'eth_signTypedData*', 'eth_accounts', 'eth_coinbase', 'personal_*', 'wallet_*'],
    reason: 'it needs accounts held by the node. Sign the transaction in the client and send it with eth_sendRawTransaction',
  },
  {
    methods: [
      'admin_*',
      'debug_*',
      'miner_*',
      'txpool_*',
      'engine_*',
      'net_peerCount',
      'eth_protocolVersion',
      'eth_hashrate',
      'eth_submitWork',
      'eth_submitHashrate',
      'eth_getCompilers',
      'eth_compile*',
    ],
    reason: 'it administers or inspects the node itself',
  },
  {
    methods: ['hardhat_*', 'evm_*', 'anvil_*', 'ganache_*', 'tenderly_*'],
    reason: 'it controls a development node',
  },
  {
    methods: [
      'eth_newFilter',
      'eth_newBlockFilter',
      'eth_newPendingTransactionFilter',
      'eth_uninstallFilter',
      'eth_getFilterChanges',
      'eth_getFilterLogs',
      'eth_subscribe',
      'eth_unsubscribe',
    ],
    reason: 'filters and subscriptions keep state on one node. Poll eth_getLogs or eth_blockNumber instead',
  },
];

const SERVED_MEMO_SIZE = 1024;

export interface MethodPolicy {
  /** undefined when the method is served; otherwise the error to answer. */
  check(method: string): JsonRpcError | undefined;
}

/** A set of exact names plus prefixes (from names ending in `*`). */
class MethodMatcher {
  readonly #exact = new Set<string>();
  readonly #prefixes: string[] = [];
  constructor(patterns: readonly string[]) {
    for (const p of patterns) {
      if (p.endsWith('*')) this.#prefixes.push(p.slice(0, -1));
      else this.#exact.add(p);
    }
  }
  matches(method: string): boolean {
    if (this.#exact.has(method)) return true;
    for (const prefix of this.#prefixes) if (method.startsWith(prefix)) return true;
    return false;
  }
}

/** Builds the policy; a config that allows a built-in refusal is a CONFIG_INVALID error naming it. */
export function createMethodPolicy(config: { allowMethods: readonly string[]; denyMethods: readonly string[] }): MethodPolicy {
  const refusals = BUILT_IN_REFUSALS.map((group) => ({ matcher: new MethodMatcher(group.methods), reason: group.reason }));
  const refusedBy = (method: string) => refusals.find((r) => r.matcher.matches(method));
  const clashes = config.allowMethods.filter((pattern) => refusedBy(pattern.replace(/\*$/, '')) !== undefined);
  if (clashes.length > 0) {
    throw new ConfigError(
      `gateway.allow_methods: ${clashes.map((c) => JSON.stringify(c)).join(', ')} cannot be allowed: the gateway always refuses ${clashes.length > 1 ? 'them' : 'it'} (${refusedBy(clashes[0]!.replace(/\*$/, ''))!.reason}).`,
    );
  }
  const allowed = new MethodMatcher([...DEFAULT_ALLOWED_METHODS, ...config.allowMethods]);
  const denied = new MethodMatcher(config.denyMethods);
  // Served methods are remembered (the hot path asks about the same few names over and over);
  // the memo is bounded because names come from clients.
  const served = new Set<string>();
  return {
    check(method) {
      if (served.has(method)) return undefined;
      const refusal = refusedBy(method);
      if (refusal) return gatewayError('GATEWAY_METHOD_REFUSED', `The method ${method} is refused by this gateway: ${refusal.reason}.`);
      if (denied.matches(method))
        return gatewayError('GATEWAY_METHOD_REFUSED', `The method ${method} is refused by this gateway's configuration (gateway.deny_methods).`);
      if (!allowed.matches(method)) return gatewayError('GATEWAY_METHOD_NOT_FOUND', `The method ${method} does not exist/is not available.`);
      if (served.size < SERVED_MEMO_SIZE) served.add(method);
      return undefined;
    },
  };
}
