/**
 * Outbound connections on behalf of an account (a zone's origin, a log job's http(s):// or s3://
 * destination) may be limited in where they lead: an OutboundGuard judges each address a
 * connection would use. The guard runs inside the connection's own DNS lookup (guardedLookup), so
 * DNS cannot answer one thing to a check and another to the connection; IP literals, which are
 * connected to without a lookup, are judged before connecting (literalRefusal).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** Why a connection to `address:port` is refused, or null when it may go ahead. */
export type OutboundGuard = (address: string, port: number) => string | null;

/** Every address of a name, as dns.lookup with `all: true` answers. */
export type ResolveAll = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export const systemResolve: ResolveAll = (hostname, options, callback) => dnsLookup(hostname, { ...options, all: true }, callback);

/** A connection was refused by its guard; the message says where it led and why. */
export class ProhibitedAddressError extends Error {
  override name = 'ProhibitedAddressError';
}

/**
 * dns.lookup for guarded connections, refusing the whole answer when the guard refuses any address
 * in it (with several addresses, the connection may try each in turn).
 */
export function guardedLookup(guard: OutboundGuard, port: number, resolve: ResolveAll = systemResolve): LookupFunction {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : '', 0);
      for (const { address } of addresses) {
        const refused = guard(address, port);
        if (refused !== null) return callback(new ProhibitedAddressError(refused), options.all ? [] : '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return callback(null, first.address, first.family);
    });
  };
}

/** The port a URL connects to (its own, or its scheme's). */
export function urlPort(url: URL): number {
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
}

/**
 * Why the guard refuses `url` whatever DNS says: its host is an IP literal (connected to without a
 * lookup) or a `localhost` name (RFC 6761 §6.3: always loopback) that leads where it may not; else null.
 */
export function literalRefusal(guard: OutboundGuard, url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const address = isIP(host) ? host : host === 'localhost' || host.endsWith('.localhost') ? '127.0.0.1' : null;
  return address === null ? null : guard(address, urlPort(url));
}
