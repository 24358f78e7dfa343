/**
 * The gas limit a signed raw transaction asks for, read from its bytes without decoding the rest:
 * the embedded chain runs (and records every step of) whatever gas a transaction is signed for,
 * and the development accounts' keys are public, so a client could otherwise make it run up to the
 * block's gas limit in one request. Which list item holds the gas limit depends on the envelope:
 * legacy `rlp([nonce, gasPrice, gas, ...])`, EIP-2930 `0x01 || rlp([chainId, nonce, gasPrice,
 * gas, ...])`, and EIP-1559 (0x02), EIP-4844 (0x03) and EIP-7702 (0x04) `rlp([chainId, nonce,
 * maxPriorityFeePerGas, maxFeePerGas, gas, ...])`.
 */

const GAS_INDEX: Readonly<Record<number, number>> = { 1: 3, 2: 4, 3: 4, 4: 4 };

/**
 * The gas limit of `raw` (0x-prefixed hex of a signed transaction), or undefined when it cannot be
 * read (not hex, an unknown envelope, malformed RLP): the chain then refuses it itself.
 */
export function rawTransactionGas(raw: unknown): bigint | undefined {
  if (typeof raw !== 'string' || raw.length < 4 || raw.length % 2 !== 0 || !/^0x[0-9a-fA-F]+$/.test(raw)) return undefined;
  const bytes = Buffer.from(raw.slice(2), 'hex');
  const first = bytes[0]!;
  // A legacy transaction is an RLP list (0xc0 and above); a typed one starts with its type byte.
  const typed = first < 0x80;
  const index = typed ? GAS_INDEX[first] : 2;
  if (index === undefined) return undefined;
  return listItem(bytes, typed ? 1 : 0, index);
}

/** The `index`th item of the RLP list at `offset`, read as an unsigned integer; undefined if malformed. */
function listItem(bytes: Buffer, offset: number, index: number): bigint | undefined {
  const list = header(bytes, offset);
  if (list === undefined || !list.isList) return undefined;
  let at = list.start;
  const end = list.start + list.length;
  if (end > bytes.length) return undefined;
  for (let i = 0; at < end; i++) {
    const item = header(bytes, at);
    if (item === undefined || item.start + item.length > end) return undefined;
    if (i === index) {
      if (item.isList || item.length > 32) return undefined;
      return item.length === 0 ? 0n : BigInt(`0x${bytes.subarray(item.start, item.start + item.length).toString('hex')}`);
    }
    at = item.start + item.length;
  }
  return undefined;
}

/** An RLP item's kind, where its payload starts and how long it is. */
function header(bytes: Buffer, at: number): { isList: boolean; start: number; length: number } | undefined {
  if (at >= bytes.length) return undefined;
  const prefix = bytes[at]!;
  if (prefix < 0x80) return { isList: false, start: at, length: 1 };
  if (prefix <= 0xb7) return { isList: false, start: at + 1, length: prefix - 0x80 };
  if (prefix < 0xc0) return long(bytes, at, prefix - 0xb7, false);
  if (prefix <= 0xf7) return { isList: true, start: at + 1, length: prefix - 0xc0 };
  return long(bytes, at, prefix - 0xf7, true);
}

/** A header whose payload length follows in `width` bytes (at most 4 read: a transaction is small). */
function long(bytes: Buffer, at: number, width: number, isList: boolean): { isList: boolean; start: number; length: number } | undefined {
  if (width > 4 || at + 1 + width > bytes.length) return undefined;
  let length = 0;
  for (let i = 0; i < width; i++) length = length * 256 + bytes[at + 1 + i]!;
  return { isList, start: at + 1 + width, length };
}
