/**
 * The hosts the edge answers for the platform itself, never for a zone: the dev domain
 * (`[workers] dev_domain`, `workers.localhost` by default) and every name under it, where
 * `<script>.<account subdomain>.<dev domain>` serves each account's scripts, and the public
 * buckets' domain (`[r2] public_domain`, `r2.localhost` by default), where `<public id>.<public
 * domain>` serves each bucket whose managed public URL is on. No account (the operator included)
 * may hold a zone at or under either, nor a route or custom domain that could match a host there;
 * and the edge resolves these hosts before any zone, so a zone or route made before that rule (or
 * before the operator moved a domain over it) never takes their requests or their log lines.
 *
 * The other listeners (management API and dashboard, gateway, S3 API with its virtual-hosted
 * bucket names) are ports of their own: the edge's port answers none of their hosts.
 */

/** Whether `host` is `domain` or a name under it (`a.b.workers.localhost` under `workers.localhost`). */
export function isAtOrUnder(host: string, domain: string): boolean {
  return host === domain || (host.length > domain.length && host.endsWith(domain) && host[host.length - domain.length - 1] === '.');
}

/** Whether `host` is the platform's `domain` (the dev domain, the public buckets' domain) or under it; never with a null domain. */
export function isPlatformHost(host: string, domain: string | null): boolean {
  return domain !== null && isAtOrUnder(host, domain);
}

/**
 * Whether a route for `host` (with `subdomains`: `*.<host>`, every name under it) could match a
 * platform host: its host is the dev domain or under it, or it covers the subdomains of a name the
 * dev domain lies under (`*.localhost/*` reaches `hello.alice.workers.localhost`).
 */
export function routeReachesPlatform(route: { host: string; subdomains: boolean }, domain: string | null): boolean {
  if (domain === null) return false;
  return isAtOrUnder(route.host, domain) || (route.subdomains && isAtOrUnder(domain, route.host));
}
