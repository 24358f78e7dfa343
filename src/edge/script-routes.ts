/**
 * Script routes from edgeport.toml (`example.test/api/*`, `*.example.test/*`, `example.test/health`):
 * a host (optionally `*.`-prefixed for subdomains) and a path that is exact or ends in `*` (prefix).
 * The most specific route wins: an exact host over a wildcard, then the longest path.
 */

export interface ScriptRoute<T> {
  pattern: string;
  target: T;
}

interface CompiledRoute<T> {
  host: string;
  subdomains: boolean;
  path: string;
  prefix: boolean;
  target: T;
  rank: number;
}

export class ScriptRouter<T> {
  readonly #routes: CompiledRoute<T>[];

  constructor(routes: ReadonlyArray<ScriptRoute<T>>) {
    this.#routes = routes.map(({ pattern, target }) => compile(pattern, target)).sort((a, b) => b.rank - a.rank);
  }

  /** The target of the most specific route matching host and path, or undefined. */
  match(host: string, path: string): T | undefined {
    for (const route of this.#routes) {
      const hostMatches = route.subdomains ? host === route.host || host.endsWith(`.${route.host}`) : host === route.host;
      if (!hostMatches) continue;
      if (route.prefix ? path.startsWith(route.path) : path === route.path) return route.target;
    }
    return undefined;
  }
}

export function parseRoutePattern(pattern: string): { host: string; subdomains: boolean; path: string; prefix: boolean } {
  const slash = pattern.indexOf('/');
  if (slash <= 0) throw new Error(`Route ${JSON.stringify(pattern)} must be <host>/<path>, e.g. "example.test/api/*".`);
  let host = pattern.slice(0, slash).toLowerCase();
  const subdomains = host.startsWith('*.');
  if (subdomains) host = host.slice(2);
  if (!/^[a-z0-9.-]+$/.test(host)) throw new Error(`Route ${JSON.stringify(pattern)} has an invalid host ${JSON.stringify(host)}.`);
  let path = pattern.slice(slash);
  const prefix = path.endsWith('*');
  if (prefix) path = path.slice(0, -1);
  if (path.includes('*')) throw new Error(`Route ${JSON.stringify(pattern)}: "*" may only end the path.`);
  return { host, subdomains, path, prefix };
}

function compile<T>(pattern: string, target: T): CompiledRoute<T> {
  const parsed = parseRoutePattern(pattern);
  return { ...parsed, target, rank: (parsed.subdomains ? 0 : 1_000_000) + parsed.path.length * 2 + (parsed.prefix ? 0 : 1) };
}
