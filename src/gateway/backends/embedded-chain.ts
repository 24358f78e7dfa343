/**
 * The embedded chain: Hardhat's EVM (`@nomicfoundation/edr`) in process, with the development
 * accounts funded, automine on (a transaction is mined the moment it is accepted, so its receipt
 * is there at once), and optionally persisted through a ChainJournal.
 *
 * EDR is a development node, not a JSON-RPC server: it is handed
 * one clean call at a time, its answers lack `id`/`jsonrpc` (the gateway adds them), its revert
 * errors are reshaped into geth's, and the trivial post-Merge answers it lacks (net_listening,
 * eth_mining, uncles) are given here. Its `hardhat_*` / `evm_*` methods are used only inside this
 * file, for replaying the journal; the method policy refuses them to clients.
 */
import {
  ContractDecoder,
  L1_CHAIN_TYPE,
  l1GenesisState,
  l1HardforkLatest,
  l1HardforkToString,
  MineOrdering,
  type Provider,
  type ProviderConfig,
} from '@nomicfoundation/edr';
import type { Logger } from '../../core/log.ts';
import type { RpcAnswer, RpcErrorObject } from '../json-rpc/response.ts';
import type { ChainBackend } from './backend.ts';
import { ChainJournal, type JournalEntry } from './chain-journal.ts';
import { DEV_ACCOUNT_BALANCE_WEI, DEV_ACCOUNTS } from './dev-accounts.ts';
import { edrContext } from './edr-context.ts';
import { normalizeEdrError } from './revert-error.ts';

/** EIP-7825 caps a transaction's gas at 2^24 under Osaka; a larger default fails every call without `gas`. */
const DEFAULT_TRANSACTION_GAS = 16_777_216n;
/** Sepolia's block gas limit (2025). */
const BLOCK_GAS_LIMIT = 60_000_000n;
const INITIAL_BASE_FEE_WEI = 1_000_000_000n;
/** Hardhat's coinbase, so blocks look as developers know them from Hardhat. */
const COINBASE = '0xc014ba5ec014ba5ec014ba5ec014ba5ec014ba5e';

export interface EmbeddedChainOptions {
  network: string;
  chainId: number;
  /** Where the chain persists; in memory only when undefined. */
  journalPath: string | undefined;
  logger: Logger;
  /** Wall-clock milliseconds (genesis time of a new journal). */
  nowMs: number;
}

/** Methods the real gateway serves that a post-Merge chain answers trivially and EDR lacks. */
const SYNTHESIZED: Record<string, (chain: EmbeddedChain, params: readonly unknown[]) => Promise<RpcAnswer>> = {
  net_listening: async () => ({ result: 'true' }),
  eth_mining: async () => ({ result: 'false' }),
  // No uncles after the Merge: zero for a block that exists, null for one that does not (geth).
  eth_getUncleCountByBlockHash: (chain, params) => chain.ifBlockExists('eth_getBlockTransactionCountByHash', params, '"0x0"'),
  eth_getUncleCountByBlockNumber: (chain, params) => chain.ifBlockExists('eth_getBlockTransactionCountByNumber', params, '"0x0"'),
  eth_getUncleByBlockHashAndIndex: async () => ({ result: 'null' }),
  eth_getUncleByBlockNumberAndIndex: async () => ({ result: 'null' }),
};

export class EmbeddedChain implements ChainBackend {
  readonly #provider: Provider;
  readonly #journal: ChainJournal | undefined;
  /** Journaled sends run one at a time, so the journal's order is the mining order. */
  #sends: Promise<unknown> = Promise.resolve();

  constructor(provider: Provider, journal: ChainJournal | undefined) {
    this.#provider = provider;
    this.#journal = journal;
  }

  call(method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    const synthesized = SYNTHESIZED[method];
    if (synthesized) return synthesized(this, params);
    if (method === 'eth_sendRawTransaction' && this.#journal) {
      const sent = this.#sends.then(() => this.#sendAndJournal(params));
      this.#sends = sent.catch(() => undefined);
      return sent;
    }
    return this.#request(method, params);
  }

  async close(): Promise<void> {
    await this.#sends;
    await this.#journal?.close();
  }

  /** Answers `found` when `probe` finds the block named by `params`, else null. */
  async ifBlockExists(probe: string, params: readonly unknown[], found: string): Promise<RpcAnswer> {
    const answer = await this.#request(probe, params.slice(0, 1));
    if (answer.error) return answer;
    return { result: answer.result === 'null' ? 'null' : found };
  }

  /** Replays journaled transactions at their original timestamps (start only). */
  async replay(entries: readonly JournalEntry[]): Promise<void> {
    for (const [i, entry] of entries.entries()) {
      const timed = await this.#request('evm_setNextBlockTimestamp', [entry.t]);
      const sent = timed.error ? timed : await this.#request('eth_sendRawTransaction', [entry.raw]);
      if (sent.error) throw new Error(`transaction ${i + 1} of ${entries.length} was refused on replay: ${sent.error.message}`);
    }
    // Replayed blocks leave the chain's clock at the last journaled timestamp, behind the wall
    // clock by however long the gateway was down; catch up so new blocks carry the real time.
    // (`evm_increaseTime` answers the chain's offset from the wall clock, in seconds.)
    const offset = await this.#request('evm_increaseTime', [0]);
    const behind = offset.result === undefined ? 0 : -Number(JSON.parse(offset.result));
    if (behind > 0) await this.#request('evm_increaseTime', [behind]);
  }

  async #sendAndJournal(params: readonly unknown[]): Promise<RpcAnswer> {
    const answer = await this.#request('eth_sendRawTransaction', params);
    if (answer.error) return answer;
    // Automine: the transaction is in the newest block, and only sends (serialized here) mine.
    const block = await this.#request('eth_getBlockByNumber', ['latest', false]);
    const timestamp = block.result ? (JSON.parse(block.result) as { timestamp: string }).timestamp : undefined;
    if (timestamp === undefined) throw new Error(`could not read the block of transaction ${answer.result}`);
    await this.#journal!.append({ t: timestamp, raw: params[0] as string });
    return answer;
  }

  async #request(method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    const response = await this.#provider.handleRequest(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
    const data: unknown = response.data;
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    // EDR answers exactly `{"result":<json>}` or `{"error":{...}}` (no id, no jsonrpc).
    if (text.startsWith('{"result":') && text.endsWith('}')) return { result: text.slice(10, -1) };
    const parsed = JSON.parse(text) as { result?: unknown; error?: RpcErrorObject };
    if (parsed.error) return { error: normalizeEdrError(parsed.error, method) };
    return { result: JSON.stringify(parsed.result ?? null) };
  }
}

/** Starts a chain (replaying its journal when there is one). */
export async function startEmbeddedChain(options: EmbeddedChainOptions): Promise<EmbeddedChain> {
  const { logger, network } = options;
  const opened = options.journalPath === undefined ? undefined : await ChainJournal.open(options.journalPath, options.chainId, options.nowMs);
  if (opened?.movedAside)
    logger.warn(
      { network, journal: opened.movedAside },
      'The embedded chain journal did not match this network (chain id or format); it was moved aside and a new chain started.',
    );
  const genesisTime = opened?.genesisTime ?? Math.floor(options.nowMs / 1000);
  let chain = new EmbeddedChain(await createProvider(options.chainId, genesisTime), opened?.journal);
  if (opened && opened.entries.length > 0) {
    try {
      await chain.replay(opened.entries);
      logger.info({ network, transactions: opened.entries.length, journal: opened.journal.path }, 'Embedded chain restored from its journal.');
    } catch (error) {
      // A journal that no longer replays (e.g. written by another EDR version) is kept for
      // inspection, and the network gets a fresh chain rather than none.
      await opened.journal.close();
      const aside = await ChainJournal.moveAside(opened.journal.path, options.nowMs);
      const fresh = await ChainJournal.open(opened.journal.path, options.chainId, options.nowMs);
      logger.warn({ network, err: error, journal: aside }, 'The embedded chain journal could not be replayed; it was moved aside and a new chain started.');
      chain = new EmbeddedChain(await createProvider(options.chainId, fresh.genesisTime), fresh.journal);
    }
  }
  logger.info({ network, chainId: options.chainId, accounts: DEV_ACCOUNTS.map((a) => a.address) }, 'Embedded chain started.');
  return chain;
}

async function createProvider(chainId: number, genesisTime: number): Promise<Provider> {
  const context = await edrContext();
  const hardfork = l1HardforkLatest();
  const config: ProviderConfig = {
    allowBlocksWithSameTimestamp: false,
    allowUnlimitedContractSize: false,
    // Reverting calls answer an error (as real nodes do), not a result holding the revert bytes.
    bailOnCallFailure: true,
    // A reverting transaction is mined with status 0, as on a real chain.
    bailOnTransactionFailure: false,
    chainId: BigInt(chainId),
    networkId: BigInt(chainId),
    coinbase: hexBytes(COINBASE),
    defaultTransactionGasLimit: DEFAULT_TRANSACTION_GAS,
    genesisState: [...l1GenesisState(hardfork), ...DEV_ACCOUNTS.map((account) => ({ address: hexBytes(account.address), balance: DEV_ACCOUNT_BALANCE_WEI }))],
    hardfork: l1HardforkToString(hardfork),
    initialBaseFeePerGas: INITIAL_BASE_FEE_WEI,
    minGasPrice: 0n,
    mining: { autoMine: true, memPool: { order: MineOrdering.Priority } },
    network: { genesisBlockGasLimit: BLOCK_GAS_LIMIT, genesisBlockTime: BigInt(genesisTime) },
    observability: {},
    ownedAccounts: [],
    precompileOverrides: [],
  };
  return context.createProvider(
    L1_CHAIN_TYPE,
    config,
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder(),
  );
}

function hexBytes(hex: string): Uint8Array {
  return Buffer.from(hex.slice(2), 'hex');
}
