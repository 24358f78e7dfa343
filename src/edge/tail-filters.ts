/**
 * A tail's filters (`wrangler tail --status/--method/--header/--ip/--search/--version-id/
 * --sampling-rate`, sent in the body of `POST .../tails` as `{filters: [...]}`): each filter is one
 * condition, an event is sent only when it meets all of them; a list within one (outcomes,
 * methods, addresses) is met by any of its items, as on the platform.
 *
 * `client_ip` matches the request's CF-Connecting-IP (the edge sets it on every request a script
 * serves); `self` stands for the address of whoever opened the tail. `query` is a plain substring
 * of a console line's text or an exception's name or message. `header` without `query` asks that
 * the request has the header; with one, that its value is exactly that.
 */
import { z } from 'zod';

const filter = z.union([
  z.strictObject({ sampling_rate: z.number().gt(0).lte(1) }),
  z.strictObject({ outcome: z.array(z.string().max(32)).min(1).max(16) }),
  z.strictObject({ method: z.array(z.string().min(1).max(32)).min(1).max(16) }),
  z.strictObject({ header: z.strictObject({ key: z.string().min(1).max(256), query: z.string().max(1024).optional() }) }),
  z.strictObject({ client_ip: z.array(z.string().min(1).max(64)).min(1).max(16) }),
  z.strictObject({ query: z.string().min(1).max(1024) }),
  z.strictObject({ scriptVersion: z.string().min(1).max(64) }),
]);

/** The body of `POST .../tails`: wrangler sends `{filters: []}` when none are asked for. */
export const tailFiltersBody = z.looseObject({ filters: z.array(filter).max(16).default([]) });

export type TailFilter = z.infer<typeof filter>;

/** What a filter sees of an event (the JSON the tail worker sends) and of the version that served it. */
export interface TailEventView {
  outcome?: unknown;
  event?: { request?: { method?: unknown; headers?: Record<string, unknown> } };
  logs?: Array<{ message?: unknown }>;
  exceptions?: Array<{ name?: unknown; message?: unknown }>;
}

/** Whether `event`, served by `versionId`, meets every filter; `openerIp` is the address `self` stands for. */
export function tailEventPasses(
  filters: readonly TailFilter[],
  event: TailEventView,
  versionId: string,
  openerIp: string | undefined,
  random: () => number = Math.random,
): boolean {
  const request = event.event?.request;
  const headers = request?.headers ?? {};
  for (const condition of filters) {
    if ('sampling_rate' in condition) {
      if (random() >= condition.sampling_rate) return false;
    } else if ('outcome' in condition) {
      if (!condition.outcome.includes(String(event.outcome))) return false;
    } else if ('method' in condition) {
      const method = String(request?.method ?? '').toUpperCase();
      if (!condition.method.some((wanted) => wanted.toUpperCase() === method)) return false;
    } else if ('header' in condition) {
      const value = headerValue(headers, condition.header.key);
      if (value === undefined || (condition.header.query !== undefined && value !== condition.header.query)) return false;
    } else if ('client_ip' in condition) {
      const ip = normalizeIp(headerValue(headers, 'cf-connecting-ip') ?? '');
      const wanted = condition.client_ip.map((entry) => normalizeIp(entry === 'self' ? (openerIp ?? '') : entry));
      if (ip === '' || !wanted.includes(ip)) return false;
    } else if ('query' in condition) {
      if (!mentions(event, condition.query)) return false;
    } else if (condition.scriptVersion !== versionId) {
      return false;
    }
  }
  return true;
}

function headerValue(headers: Record<string, unknown>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return String(value);
  return undefined;
}

function normalizeIp(ip: string): string {
  return ip
    .trim()
    .replace(/^::ffff:/i, '')
    .toLowerCase();
}

/** Whether a console line or an exception of the event contains `text`. */
function mentions(event: TailEventView, text: string): boolean {
  for (const log of event.logs ?? []) {
    const message = log.message;
    const parts = Array.isArray(message) ? message : [message];
    if (parts.some((part) => (typeof part === 'string' ? part : (JSON.stringify(part) ?? '')).includes(text))) return true;
  }
  return (event.exceptions ?? []).some((exception) => String(exception.name ?? '').includes(text) || String(exception.message ?? '').includes(text));
}
