/**
 * The real API's response envelope on every answer: `{result, success, errors, messages}`, plus
 * `result_info` on lists. Every body is `application/json` (the SDK parses nothing else).
 */
import type { ErrorItem } from './errors.ts';

export interface PageInfo {
  page: number;
  per_page: number;
  count: number;
  total_count: number;
  total_pages: number;
}

export interface CursorInfo {
  count: number;
  per_page: number;
  /** Present only when more results remain (the SDK pages while it is non-empty). */
  cursor?: string;
  /** Object listings: whether more results remain. */
  is_truncated?: boolean;
  /** Object listings with a delimiter: the folded prefixes ("folders"). */
  delimited?: string[];
}

export type ResultInfo = PageInfo | CursorInfo;

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function successResponse(result: unknown, options?: { status?: number; resultInfo?: ResultInfo }): Response {
  const body = options?.resultInfo
    ? { result, result_info: options.resultInfo, success: true, errors: [], messages: [] }
    : { result, success: true, errors: [], messages: [] };
  return new Response(JSON.stringify(body), { status: options?.status ?? 200, headers: JSON_HEADERS });
}

export function failureResponse(status: number, errors: readonly ErrorItem[]): Response {
  return new Response(JSON.stringify({ result: null, success: false, errors, messages: [] }), { status, headers: JSON_HEADERS });
}

/** 204: the one answer without a body (DELETE of a ruleset, as the real API). */
export function noContentResponse(): Response {
  return new Response(null, { status: 204 });
}
