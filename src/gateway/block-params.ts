/**
 * Reading block parameters (Ethereum JSON-RPC spec: a hex quantity, a tag, or an EIP-1898
 * `{blockHash}` / `{blockNumber}` object). Anything unreadable is left for the chain to refuse
 * with its own message.
 */

export type BlockRef =
  | { kind: 'number'; number: bigint }
  /** latest, pending, safe, finalized: they move. */
  | { kind: 'tag' }
  /** A block hash names one block forever. */
  | { kind: 'hash' }
  | { kind: 'unreadable' };

const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const MOVING_TAGS = new Set(['latest', 'pending', 'safe', 'finalized']);

export function readBlockRef(param: unknown): BlockRef {
  if (typeof param === 'string') {
    if (QUANTITY.test(param)) return { kind: 'number', number: BigInt(param) };
    if (param === 'earliest') return { kind: 'number', number: 0n };
    if (MOVING_TAGS.has(param)) return { kind: 'tag' };
    return { kind: 'unreadable' };
  }
  if (typeof param === 'number' && Number.isSafeInteger(param) && param >= 0) return { kind: 'number', number: BigInt(param) };
  if (typeof param === 'object' && param !== null) {
    const ref = param as { blockHash?: unknown; blockNumber?: unknown };
    if (typeof ref.blockHash === 'string') return { kind: 'hash' };
    if (ref.blockNumber !== undefined) return readBlockRef(ref.blockNumber);
  }
  return { kind: 'unreadable' };
}

/** A hex or numeric count (eth_feeHistory's blockCount), or undefined when unreadable. */
export function readQuantity(param: unknown): bigint | undefined {
  if (typeof param === 'string' && QUANTITY.test(param)) return BigInt(param);
  if (typeof param === 'number' && Number.isSafeInteger(param) && param >= 0) return BigInt(param);
  return undefined;
}
