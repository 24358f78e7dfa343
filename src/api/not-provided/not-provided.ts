/**
 * What the platform's API has and edgeport does not: each path (below /client/v4) is answered by
 * name, `403 / 10015 not entitled: edgeport does not provide <feature>; <what there is instead>`,
 * never the generic `7000 No route for that URI`, which stays for paths the platform does not have
 * either. A served route always wins: these are looked up only when no route serves the path and
 * method. 403, not 501: the official SDK and wrangler retry 5xx answers, and wrangler reads a 403
 * on a list it only checks (`wrangler delete` listing KV namespaces) as "not allowed" and goes on.
 *
 * test/api/route-table.test.ts reads every route the official SDK declares for the groups edgeport
 * implements (zones, rulesets, logpush, r2, workers, user, accounts, memberships) and fails on one
 * neither served nor named here, so a new SDK release shows what it added.
 */
import type { HttpMethod } from '../route.ts';
import { NOT_PROVIDED_FEATURES } from './not-provided-features.ts';

export interface NotProvidedFeature {
  /** What edgeport does not provide, as a noun phrase ("Workers KV"). */
  feature: string;
  /** Path templates below /client/v4: `:name` is one segment, a trailing `/**` the path itself and anything below it. */
  paths: readonly string[];
  /** Only these methods (default: every method). */
  methods?: readonly HttpMethod[];
  /** What to use instead, if anything. */
  instead?: string;
}

interface Compiled {
  entry: NotProvidedFeature;
  pattern: RegExp;
}

function compile(template: string): RegExp {
  const below = template.endsWith('/**');
  const base = below ? template.slice(0, -3) : template;
  const body = base
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}${below ? '(/.*)?' : ''}$`);
}

const COMPILED: readonly Compiled[] = NOT_PROVIDED_FEATURES.flatMap((entry) => entry.paths.map((path) => ({ entry, pattern: compile(path) })));

/** The feature a request for `path` (below /client/v4) asks for that edgeport does not provide, if any; the first entry listed wins. */
export function notProvidedFor(method: string, path: string): NotProvidedFeature | undefined {
  for (const { entry, pattern } of COMPILED) {
    if ((entry.methods === undefined || entry.methods.includes(method as HttpMethod)) && pattern.test(path)) return entry;
  }
  return undefined;
}

/** The error entry's message for a feature. */
export function notProvidedMessage(feature: NotProvidedFeature): string {
  return `not entitled: edgeport does not provide ${feature.feature}${feature.instead === undefined ? '' : `; ${feature.instead}`}`;
}
