/**
 * Which methods run EVM code on the node, and the gas cap applied to them before they are sent
 * (geth's `rpc.gascap`): a call asking for more gas, or for none (a node would then give it the
 * block's whole gas limit), is cut to the cap. The cap bounds a call's work on an upstream node
 * as on the embedded chain, whose memory grows with every step it runs. A raw transaction sent to
 * the embedded chain cannot be cut (it is signed): one over the cap is refused.
 */
import { rawTransactionGas } from './raw-transaction-gas.ts';

/** Methods whose params start with a call object (`{to, data, gas, ...}`). */
const CALL_OBJECT_METHODS = new Set(['eth_call', 'eth_estimateGas', 'eth_createAccessList', 'trace_call', 'debug_traceCall']);

/** Every method that executes EVM code for a caller without a signed transaction. */
export const EVM_METHODS: ReadonlySet<string> = new Set([...CALL_OBJECT_METHODS, 'eth_simulateV1']);

/** `params` with each call's gas at most `cap`; the same array when nothing had to change. */
export function capCallGas(method: string, params: readonly unknown[], cap: number): readonly unknown[] {
  if (CALL_OBJECT_METHODS.has(method)) {
    const call = params[0];
    const capped = cappedCall(call, cap);
    return capped === call ? params : [capped, ...params.slice(1)];
  }
  if (method === 'eth_simulateV1') return capSimulation(params, cap);
  return params;
}

/** A transaction's base cost, and the least each byte of its data costs (a zero byte; EIP-2028). */
const TX_BASE_GAS = 21_000;
const GAS_PER_DATA_BYTE_AT_LEAST = 4;

/**
 * The answer for a call whose data alone costs more than the cap, before the node (or the cache
 * key, a hash of the params) ever sees megabytes of hex: what the node would answer anyway, as
 * geth words it. undefined when the data fits under the cap.
 */
export function dataOverCap(method: string, params: readonly unknown[], cap: number): { code: number; message: string } | undefined {
  if (!CALL_OBJECT_METHODS.has(method)) return undefined;
  const call = params[0] as { data?: unknown; input?: unknown } | null | undefined;
  if (typeof call !== 'object' || call === null) return undefined;
  const longest = Math.max(hexLength(call.data), hexLength(call.input));
  const bytes = Math.floor(Math.max(0, longest - 2) / 2);
  const least = TX_BASE_GAS + GAS_PER_DATA_BYTE_AT_LEAST * bytes;
  if (least <= cap) return undefined;
  return {
    code: -32000,
    message: `intrinsic gas too high: the call's ${bytes} bytes of data need at least ${least} gas, over this gateway's gas cap of ${cap} per call`,
  };
}

/**
 * The answer for a signed raw transaction whose gas limit is over the cap (its signature covers
 * the gas, so it cannot be cut as a call's is), worded as geth words EIP-7825's transaction gas
 * cap; undefined when it fits or cannot be read (the chain then judges it).
 */
export function transactionOverCap(raw: unknown, cap: number): { code: number; message: string } | undefined {
  const gas = rawTransactionGas(raw);
  if (gas === undefined || gas <= BigInt(cap)) return undefined;
  return { code: -32000, message: `transaction gas limit too high (cap: ${cap}, tx: ${gas}): this gateway's chain runs at most ${cap} gas per transaction` };
}

function hexLength(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}

/** The call object with its `gas` at most `cap` (as a hex quantity); anything not an object is left for the node to refuse. */
function cappedCall(call: unknown, cap: number): unknown {
  if (typeof call !== 'object' || call === null || Array.isArray(call)) return call;
  const gas = (call as { gas?: unknown }).gas;
  if (gas !== undefined && gas !== null && withinCap(gas, cap)) return call;
  return { ...call, gas: `0x${cap.toString(16)}` };
}

/** True when `gas` is a quantity the node would read as at most `cap`; anything unreadable is replaced by the cap. */
function withinCap(gas: unknown, cap: number): boolean {
  if (typeof gas === 'number') return Number.isSafeInteger(gas) && gas >= 0 && gas <= cap;
  if (typeof gas !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(gas)) return false;
  return BigInt(gas) <= BigInt(cap);
}

/** eth_simulateV1: `{blockStateCalls: [{calls: [...]}, ...]}`; every call is capped on its own. */
function capSimulation(params: readonly unknown[], cap: number): readonly unknown[] {
  const options = params[0] as { blockStateCalls?: unknown } | null | undefined;
  if (typeof options !== 'object' || options === null || !Array.isArray(options.blockStateCalls)) return params;
  const blockStateCalls = options.blockStateCalls.map((block: unknown) => {
    const calls = (block as { calls?: unknown } | null)?.calls;
    if (!Array.isArray(calls)) return block;
    return { ...(block as object), calls: calls.map((call) => cappedCall(call, cap)) };
  });
  return [{ ...options, blockStateCalls }, ...params.slice(1)];
}
