/**
 * Preloaded (`node --import`) into the third-party CLIs a test runs (wrangler): every connection
 * the process tries to a host other than this machine's loopback is refused before any packet or
 * DNS query leaves it, with the error a refused connection gives (ECONNREFUSED), so the CLI fails
 * fast and says where it tried to go. Allowed: 127.0.0.0/8, ::1 (also IPv4-mapped), `localhost`
 * and `*.localhost`, and Unix sockets. Everything that opens a TCP connection in Node (http, https,
 * http2, tls, undici's fetch, global fetch) goes through `net.Socket.prototype.connect`; name
 * look-ups that do not (`dns.lookup`, `dns.promises.lookup`, the resolvers) are refused likewise.
 * With `LOOPBACK_ONLY_LOG=<file>`, each refusal is also appended to that file as a line
 * (`connect api.example.com:443`), for the test to see what the CLI tried. Plain JavaScript: it
 * runs before the CLI's own code.
 */
import dns from 'node:dns';
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const LOG = process.env.LOOPBACK_ONLY_LOG;

/** True for a host this process may connect to or look up. */
function isLoopback(host) {
  const name = String(host)
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (net.isIPv4(name)) return name.startsWith('127.');
  if (net.isIPv6(name)) return name === '::1' || /^::ffff:127\./.test(name) || /^(0{1,4}:){7}0{0,3}1$/.test(name);
  return false;
}

function refusal(host, port, syscall) {
  const where = port === undefined ? String(host) : `${host}:${port}`;
  if (LOG) appendFileSync(LOG, `${syscall} ${where}\n`);
  return Object.assign(new Error(`${syscall} ECONNREFUSED ${where} (refused by loopback-only.mjs: this process may reach loopback hosts only)`), {
    code: 'ECONNREFUSED',
    errno: -111,
    syscall,
    address: String(host),
    ...(port === undefined ? {} : { port: Number(port) }),
  });
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function loopbackOnlyConnect(...args) {
  // connect(options[, cb]), connect(path[, cb]), connect(port[, host][, cb]); a normalized [options, cb] array from net.connect.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options =
    typeof first === 'object' && first !== null ? first : typeof first === 'string' && !/^\d+$/.test(first) ? { path: first } : { port: first, host: args[1] };
  // As net does: a non-empty `path` is a Unix socket (http passes `path: null` for a URL's).
  const unixSocket = typeof options.path === 'string' && options.path !== '';
  if (!unixSocket) {
    const host = typeof options.host === 'string' ? options.host : 'localhost';
    if (!isLoopback(host)) {
      const error = refusal(host, options.port, 'connect');
      process.nextTick(() => this.destroy(error));
      return this;
    }
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function loopbackOnlyLookup(hostname, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  if (!isLoopback(hostname) && typeof done === 'function') {
    process.nextTick(() => done(refusal(hostname, undefined, 'getaddrinfo')));
    return {};
  }
  return lookup.call(this, hostname, options, callback);
};
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = async function loopbackOnlyPromisesLookup(hostname, options) {
  if (!isLoopback(hostname)) throw refusal(hostname, undefined, 'getaddrinfo');
  return promisesLookup.call(this, hostname, options);
};
for (const name of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveMx', 'resolveNs', 'resolveSrv', 'resolveTxt']) {
  dns[name] = (hostname, ...rest) => {
    const done = rest.at(-1);
    if (typeof done === 'function') process.nextTick(() => done(refusal(hostname, undefined, 'query')));
  };
  dns.promises[name] = async (hostname) => {
    throw refusal(hostname, undefined, 'query');
  };
}
