/**
 * Zone names as both control stores compare them when a zone is created: a name may not equal, lie
 * under, or hold another account's zone (the edge routes a host to its most specific zone, so a
 * zone under another account's would take that account's traffic). The zones above a name are
 * looked up one indexed name each; the zones under it are one range of the reversed-name index
 * (migration 8). Public suffixes (`co.uk`, `github.io`) are no one's: a zone is never one, and
 * none above a registrable domain is looked for.
 */
import { createRequire } from 'node:module';
import type { getDomain as GetDomain } from 'tldts';

/**
 * Public Suffix List lookups on a bare lower-case name (tldts bundles the list: no network). Its
 * private section counts too (`github.io`, `blogspot.com`): each name under those belongs to a
 * different owner, so a zone there would take every one of them, as a zone on `co.uk` would.
 */
const SUFFIX_LIST = { allowPrivateDomains: true, extractHostname: false, detectIp: false, validateHostname: false } as const;

let getDomain: typeof GetDomain | undefined;

/**
 * tldts, loaded by the first name judged rather than at start: building its list costs 15-25 ms
 * of CPU through require (and 50 ms more through an ESM import of its CommonJS build), which every
 * start would pay for lookups that only creating a zone makes.
 */
function suffixLookup(): typeof GetDomain {
  getDomain ??= (createRequire(import.meta.url)('tldts') as { getDomain: typeof GetDomain }).getDomain;
  return getDomain;
}

/**
 * The domain registered under a public suffix that `name` is or lies under (`shop.co.uk` for
 * `www.shop.co.uk`), or null when `name` is itself a public suffix (`co.uk`, `github.io`, and by
 * the list's default rule `*` any top-level label it does not list, such as `test`).
 */
export function registrableDomain(name: string): string | null {
  return suffixLookup()(name, SUFFIX_LIST);
}

/** `shop.test` -> `tset.pohs`: the key of the `name_reversed` column. */
export function reversedName(name: string): string {
  let reversed = '';
  for (let i = name.length - 1; i >= 0; i--) reversed += name[i];
  return reversed;
}

/**
 * The names a zone could have above `name`, nearest first, down to its registrable domain:
 * `a.b.shop.co.uk` -> `b.shop.co.uk`, `shop.co.uk`. At most 126 (253 characters, two per label).
 * A public suffix above it is not one of them: a zone on `co.uk` made before suffixes were refused
 * does not hold the names under it.
 */
export function ancestorNames(name: string): string[] {
  const names: string[] = [];
  const registrable = registrableDomain(name);
  if (registrable === null) return names;
  let rest = name;
  while (rest !== registrable) {
    const dot = rest.indexOf('.');
    if (dot < 0) return names; // unreachable: the registrable domain ends `name` at a label boundary
    rest = rest.slice(dot + 1);
    names.push(rest);
  }
  return names;
}

/**
 * The `name_reversed` range of every zone under `name` (`*.shop.test`: from `tset.pohs.` up to, not
 * including, `tset.pohs/`, the next string in byte order after every string that starts with
 * `tset.pohs.`). Both bounds are exclusive; the low one is never a name (names do not end with a dot).
 */
export function descendantRange(name: string): { after: string; before: string } {
  const reversed = reversedName(name);
  return { after: `${reversed}.`, before: `${reversed}/` };
}

/**
 * The last two labels of a name: every zone above or under `name` has the same ones (names have at
 * least two labels), so creates that could conflict serialize on one lock per family (PostgreSQL).
 */
export function zoneFamily(name: string): string {
  const last = name.lastIndexOf('.');
  const before = last <= 0 ? -1 : name.lastIndexOf('.', last - 1);
  return name.slice(before + 1);
}
