/** The platform's hosts (the dev domain and under it): names compared by labels, and routes judged by what the edge's route matcher would match. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isAtOrUnder, isPlatformHost, routeReachesPlatform } from '../../src/edge/platform-hosts.ts';
import { ScriptRouter } from '../../src/edge/script-routes.ts';

/** Few labels, so that names often share suffixes, and near-misses such as `xworkers`. */
const name = fc.array(fc.constantFrom('a', 'b', 'workers', 'xworkers', 'localhost', 'alice'), { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));

test("isAtOrUnder: the domain, or a name whose last labels are the domain's", { timeout: 10_000 }, () => {
  assert.ok(isAtOrUnder('workers.localhost', 'workers.localhost'));
  assert.ok(isAtOrUnder('hello.alice.workers.localhost', 'workers.localhost'));
  assert.ok(!isAtOrUnder('xworkers.localhost', 'workers.localhost'), 'a label boundary, not a string suffix');
  assert.ok(!isAtOrUnder('localhost', 'workers.localhost'));
  assert.ok(!isPlatformHost('workers.localhost', null), 'no dev domain: no platform hosts');
  fc.assert(
    fc.property(name, name, (host, domain) => {
      const hostLabels = host.split('.');
      const domainLabels = domain.split('.');
      const expected = hostLabels.length >= domainLabels.length && hostLabels.slice(-domainLabels.length).join('.') === domain;
      assert.equal(isAtOrUnder(host, domain), expected);
    }),
    { numRuns: 2_000 },
  );
});

test("routeReachesPlatform: exactly the routes the edge's matcher would give a host of the dev domain", { timeout: 10_000 }, () => {
  const cases: Array<[string, boolean]> = [
    ['hello.alice.workers.localhost/*', true],
    ['*.workers.localhost/*', true],
    ['workers.localhost/*', true],
    ['*.localhost/*', true],
    ['*.alice.workers.localhost/api/*', true],
    ['localhost/*', false],
    ['xworkers.localhost/*', false],
    ['*.xworkers.localhost/*', false],
    ['shop.test/*', false],
  ];
  for (const [pattern, reaches] of cases) {
    const host = pattern.slice(0, pattern.indexOf('/')).replace(/^\*\./, '');
    assert.equal(routeReachesPlatform({ host, subdomains: pattern.startsWith('*.') }, 'workers.localhost'), reaches, pattern);
  }
  assert.ok(!routeReachesPlatform({ host: 'workers.localhost', subdomains: true }, null));
  // If any host of the dev domain matches, one of these does: the route's own host, a name under
  // it, the dev domain, a name under that.
  fc.assert(
    fc.property(name, fc.boolean(), name, (host, subdomains, devDomain) => {
      const router = new ScriptRouter([{ pattern: `${subdomains ? '*.' : ''}${host}/*`, target: true }]);
      const witnesses = [host, `z.${host}`, devDomain, `z.${devDomain}`].filter((candidate) => isPlatformHost(candidate, devDomain));
      const matched = witnesses.some((candidate) => router.match(candidate, '/') !== undefined);
      assert.equal(routeReachesPlatform({ host, subdomains }, devDomain), matched, `${subdomains ? '*.' : ''}${host} with ${devDomain}`);
    }),
    { numRuns: 5_000 },
  );
});
