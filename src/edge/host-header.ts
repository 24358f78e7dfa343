/**
 * The Host header of a request at the edge, checked as RFC 9112 §3.2 asks of a server: exactly one
 * Host field whose value is a valid `uri-host [ ":" port ]` (RFC 9110 §7.2), else 400. The host is
 * a DNS name (letters, digits, `-` and `_` in dot-separated labels), an IPv4 address or a
 * bracketed IPv6 address; the port, when present, is at most 65535 and plays no part in routing.
 */
import { isIPv6 } from 'node:net';

export type HostHeader = { host: string } | { problem: string };

const HOST_AND_PORT = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?))(?::(\d*))?$/;
const MAX_NAME = 253;
const MAX_LABEL = 63;
const SHOWN = 100;

/**
 * The zone-routing host of a request (lower case, without port or trailing dot; an IPv6 address
 * keeps its brackets), or what is wrong with its Host header.
 */
export function parseHostHeader(rawHeaders: readonly string[]): HostHeader {
  let value: string | undefined;
  let count = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      count += 1;
      value ??= rawHeaders[i + 1]!;
    }
  }
  if (value === undefined) return { problem: 'the request has no Host header: send one naming the site, such as "Host: example.com".' };
  if (count > 1) return { problem: `the request has ${count} Host headers: send exactly one.` };
  if (value === '') return { problem: 'the Host header is empty: it must name the site, such as "Host: example.com".' };
  const lower = value.toLowerCase();
  const match = HOST_AND_PORT.exec(lower);
  const [, ipv6, name, port] = match ?? [];
  const valid =
    match !== null &&
    (ipv6 === undefined || isIPv6(ipv6)) &&
    (name === undefined || (name.length <= MAX_NAME + 1 && name.split('.').every((label) => label.length <= MAX_LABEL))) &&
    (port === undefined || port === '' || (port.length <= 5 && Number(port) <= 65535)) &&
    // A name whose last label starts with a digit is read as an IPv4 address by URL parsers
    // (WHATWG): `127.t.0.1` or `1.2.3.4.5` would be a host no URL can hold.
    (name === undefined || !/(?:^|\.)[0-9][^.]*\.?$/.test(name) || URL.canParse(`http://${name}/`));
  if (!valid) {
    const shown = value.length > SHOWN ? `${value.slice(0, SHOWN)}...` : value;
    return { problem: `the Host header ${JSON.stringify(shown)} is not a host name with an optional port, such as "example.com" or "example.com:8080".` };
  }
  if (ipv6 !== undefined) return { host: `[${ipv6}]` };
  return { host: name!.endsWith('.') ? name!.slice(0, -1) : name! };
}
