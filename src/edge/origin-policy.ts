/**
 * Where a zone's origin may lead. The operator's zones (the first account's) may use any origin.
 * Every other account's origin must lead to public addresses (unless the operator sets
 * `[edge] allow_private_origins = true`) and never to one of this edgeport's own listeners (the
 * management API, the gateway's metrics, ...: an address of this machine at a listener's port),
 * which is refused without saying so: the words would tell any account which ports are edgeport's.
 * The edge checks the address it actually connects to (origin-proxy.ts), so a name that resolves to
 * a public address at zone creation and to 127.0.0.1 later is still refused; the API refuses IP
 * literals and `localhost` names when the origin is set, where the answer cannot change.
 */
import { networkInterfaces } from 'node:os';
import { canonicalIp, IP_SCOPE_WORDS, ipScope } from '../core/net/ip-scope.ts';
import { literalRefusal, type OutboundGuard } from '../core/net/outbound-guard.ts';

/** One of edgeport's own listeners. */
export interface ListenerAddress {
  host: string;
  port: number;
}

export interface OriginPolicyOptions {
  /** `[edge] allow_private_origins`: every account may use loopback, private and link-local origins (never edgeport's own listeners). */
  allowPrivateOrigins: boolean;
  /** The operator's account id (ControlStore.firstAccount); null while there is no account. */
  operatorAccountId: () => Promise<string | null>;
  /** edgeport's own listeners, read at each check (their ports are known once they are bound). */
  ownListeners?: () => readonly ListenerAddress[];
  /** This machine's addresses (default: every network interface's); tests pass their own. */
  localAddresses?: () => readonly string[];
}

/** Why a connection to `address:port` is refused for a zone that is not the operator's, or null when it may go ahead. */
export type OriginGuard = OutboundGuard;

export class OriginPolicy {
  readonly #options: OriginPolicyOptions;
  /** The operator never changes once there is one (accounts are never deleted). */
  #operator: string | null = null;
  readonly #guard: OriginGuard = (address, port) => this.#refusal(address, port);

  constructor(options: OriginPolicyOptions) {
    this.#options = options;
  }

  /** The guard for a zone of `accountId`'s origin connections; null for the operator's zones, which may connect anywhere. */
  async guardFor(accountId: string): Promise<OriginGuard | null> {
    this.#operator ??= await this.#options.operatorAccountId();
    return accountId === this.#operator ? null : this.#guard;
  }

  /**
   * Why `origin` cannot be `accountId`'s zone's origin whatever DNS says (its host is an IP
   * literal or a `localhost` name that leads where the account may not go), or null.
   */
  async originProblem(accountId: string, origin: URL): Promise<string | null> {
    const guard = await this.guardFor(accountId);
    return guard && literalRefusal(guard, origin);
  }

  #refusal(address: string, port: number): string | null {
    const ip = canonicalIp(address);
    const scope = ipScope(ip) ?? 'reserved';
    const own = this.#isOwnListener(ip, scope, port);
    if (!own && (scope === 'public' || this.#options.allowPrivateOrigins)) return null;
    if (scope !== 'public' && !this.#options.allowPrivateOrigins) {
      // edgeport's own listeners on such an address are refused in the same words as any other port there.
      return (
        `${ip} is ${IP_SCOPE_WORDS[scope]}, which only the operator's zones may use as an origin` +
        ' (the operator can allow private origins for every account with [edge] allow_private_origins = true)'
      );
    }
    // Never why: naming the port as edgeport's own would tell every account which ports on this machine are.
    return `${ip.includes(':') ? `[${ip}]` : ip}:${port} may not be used as an origin by this account's zones; only the operator's zones may`;
  }

  /** An address of this machine at the port of one of edgeport's listeners (whichever of its addresses the listener is bound to). */
  #isOwnListener(ip: string, scope: string, port: number): boolean {
    const listeners = this.#options.ownListeners?.() ?? [];
    if (!listeners.some((listener) => listener.port === port)) return false;
    if (scope === 'loopback' || scope === 'unspecified') return true;
    if (listeners.some((listener) => listener.port === port && canonicalIp(listener.host) === ip)) return true;
    return (this.#options.localAddresses?.() ?? interfaceAddresses()).some((local) => canonicalIp(local) === ip);
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}
