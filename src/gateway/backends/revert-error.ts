/**
 * Chain errors in the shape clients expect from a real Sepolia node (geth). EDR reports a revert
 * as `{code: -32000, message: "reverted with reason string 'x'", data: {reason, data, ...}}`;
 * geth as `{code: 3, message: "execution reverted: x", data: "0x<revert bytes>"}`, and viem and
 * ethers decode revert reasons and custom errors from that `data` string.
 */
import type { RpcErrorObject } from '../json-rpc/response.ts';

/** `Error(string)` selector (Solidity ABI). */
const ERROR_STRING_SELECTOR = '0x08c379a0';

/** Normalizes one EDR error object; `method` names the call for messages. */
export function normalizeEdrError(error: RpcErrorObject, method: string): RpcErrorObject {
  const revertData = revertBytes(error);
  if (revertData !== undefined) {
    if (revertData === '0x') return { code: -32000, message: 'execution reverted' };
    const reason = decodeErrorString(revertData);
    return { code: 3, message: reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`, data: revertData };
  }
  // geth's words for a call that used all its gas (EDR says "Transaction ran out of gas").
  if (error.code === -32000 && error.message === 'Transaction ran out of gas') return { code: -32000, message: 'out of gas' };
  if (error.code === -32004) return { code: -32601, message: `The method ${method} is not available on the embedded chain.` };
  // EDR echoes the whole request in `data` for parse-level errors: noise, not information.
  return { code: error.code, message: error.message };
}

function revertBytes(error: RpcErrorObject): string | undefined {
  const data = error.data as { data?: unknown; reason?: unknown } | null | undefined;
  if (error.code !== -32000 || typeof data !== 'object' || data === null) return undefined;
  if (typeof data.data !== 'string' || !data.data.startsWith('0x')) return undefined;
  return /revert/i.test(error.message) ? data.data : undefined;
}

/** The reason of an `Error(string)` revert, or undefined for anything else (custom errors, panics). */
export function decodeErrorString(hex: string): string | undefined {
  if (!hex.startsWith(ERROR_STRING_SELECTOR) || hex.length < 10 + 128) return undefined;
  const body = Buffer.from(hex.slice(10), 'hex');
  const offset = Number(body.readBigUInt64BE(24));
  if (offset + 32 > body.length) return undefined;
  const length = Number(body.readBigUInt64BE(offset + 24));
  if (offset + 32 + length > body.length) return undefined;
  return body.subarray(offset + 32, offset + 32 + length).toString('utf8');
}
