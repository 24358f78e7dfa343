/** Every server default in one place (docs/configuration.md lists them for users). */
export const DEFAULTS = {
  /** Where metadata and blobs live for the embedded default. */
  dataDir: './.edgeport',
  /** `edgeport dev`'s data dir (its buckets): apart from `edgeport start`'s, as one process at a time uses a data dir. */
  devDataDir: './.edgeport-dev',
  /** Listening address of every service. */
  host: '127.0.0.1',
  ports: {
    edge: 8080,
    api: 8081,
    gateway: 8545,
    s3: 9000,
    dev: 8787,
  },
  logLevel: 'info',
  /**
   * The edge: only the operator's zones (the first account's) may proxy to loopback, private and
   * link-local origins; `true` lets every account's zones do so (never to edgeport's own listeners).
   */
  edge: { allowPrivateOrigins: false },
  /**
   * Buckets' lifecycle rules are applied every minute: an object is deleted (or moved, or an upload
   * aborted) within about a minute of becoming due, plus the time a sweep takes to reach it.
   */
  store: { lifecycleIntervalMs: 60_000 },
  /**
   * Scripts accounts deploy through the API: at most 100 per account and 1,000 routes per zone, as
   * the platform's defaults; `<script>.<account subdomain>.workers.localhost` serves each one whose
   * workers.dev-style subdomain is on (`localhost` names resolve to this machine). Each instance
   * loads a deployed script on its first request, as an isolate in its account's workerd process
   * (about 2 MB each; a process about 50 MB), keeps at most 1,000 running (stopping the one idle
   * longest to make room) and stops one idle for 15 minutes. An account's share: 100 scripts loaded
   * and 100 requests in flight at once (as many more wait up to 5 s), 1 GiB for its process; at
   * most 32 account processes run at once (the idle longest stops to make room), about 1.6 GB of
   * processes plus their scripts. A deployed script may hold its process's thread 30 s and its
   * isolate's heap 128 MiB, as a configured script by default.
   */
  workers: {
    maxScriptsPerAccount: 100,
    maxRoutesPerZone: 1_000,
    devDomain: 'workers.localhost',
    maxRunning: 1_000,
    idleStopMs: 900_000,
    maxAccountProcesses: 32,
    maxRunningPerAccount: 100,
    maxRequestsPerAccount: 100,
    accountQueueMs: 5_000,
    accountMemoryMb: 1_024,
    scriptCpuMs: 30_000,
    scriptMemoryMb: 128,
    // An upload is tried in a workerd process of its own before it is stored: two at once, one of
    // them an account's; three more of its uploads waiting, sixteen in all.
    uploadTrials: { running: 2, runningPerAccount: 1, waitingPerAccount: 3, waiting: 16 },
  },
  /**
   * A bucket whose managed public URL is on (wrangler's `r2 bucket dev-url enable`) is served
   * read-only at `pub-<32 hex>.r2.localhost` on the edge's port, as the platform's r2.dev
   * (`localhost` names resolve to this machine).
   */
  r2: { publicDomain: 'r2.localhost' },
  /**
   * What each account may store (0: no limit; `[quotas]`, src/config/quotas.ts). Generous for an
   * honest account on a self-hosted server, and a bound on one that floods: 100 GiB and 10 million
   * objects (each object's row is a few hundred bytes of metadata); 1 GiB of script modules, which
   * holds 100 versions of ten 1 MiB scripts. A script keeps its 100 newest versions (what the
   * platform lets you roll back to since September 2025) and the deployed one: older versions go
   * with the upload that makes one too many.
   */
  /**
   * Backends: a call to the database or an s3:// blob store that takes 10 s (far above the
   * milliseconds they take when well; a blob call counts a byte moving on its connection as an
   * answer, so a large upload over a slow link goes on) is an outage, answered 503 at once after
   * that. The data dir's file system must keep 64 MiB free (SQLite, spools and the blob files of
   * writes in flight need room), and 8 MiB are held in `disk-reserve`, released on a full disk so
   * that deletes, whose SQLite writes (a few pages in the WAL) need a little room too, go through.
   */
  backends: { dbTimeoutMs: 10_000, blobsTimeoutMs: 10_000, minFreeDiskBytes: 64 * 1024 * 1024, diskReserveBytes: 8 * 1024 * 1024 },
  quotas: { maxObjectBytes: 100 * 1024 ** 3, maxObjects: 10_000_000, maxScriptBytes: 1024 ** 3, maxVersionsPerScript: 100 },
  /**
   * Log shipping: a batch waits at most 30 s (the real service's default), shutdown delivers for up
   * to 10 s. file:// destinations may point only below `<data dir>/log-files` (fileRootInDataDir):
   * the server's own, so two users of one machine never share it and removing the data dir removes
   * it too; shared by every account of the server; a destination must be a directory strictly below
   * a root (one account may not claim a whole root) unless fileRootsClaimable.
   * Spools are bounded because they share a volume with the database and blobs: 64 MiB per job holds
   * over 100,000 typical lines (~500 B), more than one default batch, i.e. minutes of a busy zone's
   * traffic while its destination is down; 1 GiB in all is 16 such jobs. A job whose destination
   * has failed without a success for 5 minutes (about ten retries with backoff) is paused: it takes
   * no new lines until a delivery succeeds.
   */
  logs: {
    maxBatchIntervalMs: 30_000,
    shutdownDeliveryMs: 10_000,
    fileRootInDataDir: 'log-files',
    fileRootsClaimable: false,
    maxJobSpoolBytes: 64 * 1024 * 1024,
    maxTotalSpoolBytes: 1024 * 1024 * 1024,
    pauseAfterFailingMs: 5 * 60_000,
  },
  /**
   * Every listener's protection against slow or flooding clients (`[limits]`, src/config/limits.ts).
   * Real clients never come near them: a browser opens about 6 connections per host, the AWS SDK up
   * to 50, load generators 32-64; a request head arrives in one or two packets.
   */
  limits: {
    /** The whole request head must arrive within this (slowloris); Node's own default is 60 s. */
    headerTimeoutMs: 20_000,
    /** A keep-alive connection idle between requests is closed after this (Node's default, sent as `Keep-Alive: timeout=5`). */
    keepAliveTimeoutMs: 5_000,
    /** A connection that moves no bytes either way for this long, mid-request, is closed (requests themselves have no time limit). */
    idleTimeoutMs: 120_000,
    /** Open connections per listener; more are refused with a 503 at once. */
    maxConnections: 4_096,
    /** Open connections per listener from one client address (IPv6: per /64); more are refused with a 503 at once. */
    maxConnectionsPerClient: 256,
    /**
     * New requests get a 503 while the event loop runs this far behind (a request would wait that
     * long); 0 never sheds. A new connection's request waits about two loop turns of up to this
     * plus a quarter, so 50 ms keeps a waiting client's median near 150 ms in a request flood even
     * on a loaded machine (at 1 s it reached 0.4-1.1 s before shedding began); toobusy-js sheds at
     * 70 ms. A few requests after a pause of the loop's own are never shed (src/cli/listener.ts).
     */
    maxEventLoopDelayMs: 50,
  },
  /**
   * Credential checks of the management API (X-Auth-Email / X-Auth-Key, dashboard sign-in) and the
   * S3 API (SigV4). A client address or an e-mail may fail `max_*` times at once, then once every
   * window / max: past that, attempts are refused (429) before any verification. Per service: the
   * API and the S3 API count separately. The S3 API limits addresses only: a signature costs
   * microseconds to check, so a valid one passes whatever others did with its key id.
   */
  auth: {
    failureWindowMs: 60_000,
    /** Per client address (IPv6: per /64). Generous: a NAT or a CI runner shares one address. */
    maxFailuresPerAddress: 20,
    /** Per e-mail, from any address (addresses where it signed in lately are exempt); not per S3 key id. */
    maxFailuresPerIdentity: 10,
    /** API-key hashes (scrypt, ~50 ms each on their own thread) waiting at most, shared fairly per client address; beyond, 503 at once. */
    maxQueuedHashes: 16,
    /** Dashboard sessions kept per account (the newest); never counted across accounts. */
    maxSessionsPerAccount: 100,
    /** API tokens an account may hold (each policy and list in one is bounded too: src/api/tokens/token-schema.ts). */
    maxTokensPerAccount: 50,
  },
  gateway: {
    /** Networks served at /v1/<name>; both run on the embedded chain unless given upstreams. */
    networks: [
      { name: 'sepolia', chainId: 11155111 },
      /** Retired on 2023-01-30 (docs/gateway.md): from then on every request names sepolia instead. */
      { name: 'rinkeby', chainId: 4, retiredOn: '2023-01-30', replacement: 'sepolia' },
    ],
    /** geth's limit: 5 MiB per HTTP body. */
    maxBodyBytes: 5 * 1024 * 1024,
    /** geth's limit (viem batches up to 1000 calls, ethers up to 100). */
    maxBatchItems: 1000,
    upstreamTimeoutMs: 10_000,
    upstreamCooldownMs: 5_000,
    cacheMaxEntries: 10_000,
    cacheMaxBytes: 64 * 1024 * 1024,
    /** The real gateway's documented limits (eth_getLogs, trace_filter; eth_feeHistory). */
    maxLogsBlockRange: 800,
    maxFeeHistoryBlocks: 10,
    /** Per client IP; every batch member counts. */
    rateLimit: { requestsPerSecond: 2_000, burst: 10_000 },
    /**
     * Gas for one call that runs EVM code (eth_call, eth_estimateGas...): more is cut to this, as
     * geth's `rpc.gascap` (50M), and data that alone costs more is refused before it is parsed
     * further. The embedded chain records every EVM step it runs (for stack traces; EDR cannot turn
     * it off) and so holds ~0.25 KB per gas of a tight loop and ~1.2 KB per gas of a loop of 1-gas
     * JUMPDESTs while a call runs (memory it keeps for reuse). At 300k gas an endless tight loop
     * grew the server by 60-65 MB and took 50-150 ms (0.4-1.3 s for the first, while the chain's
     * memory grows); 16.7M gas, the former default, took seconds and ~3 GB. Plenty for reads (an
     * ERC-20 balanceOf is ~25k gas); estimating a large deployment needs more, which an operator
     * with the memory can allow. Upstream nodes run calls in their own memory and bound it
     * themselves: their calls get geth's own default cap.
     */
    evmGasCap: { embedded: 300_000, upstream: 50_000_000 },
    /** Wall time one EVM call may take before its answer is an error (geth's `rpc.evmtimeout`). */
    evmTimeoutMs: 5_000,
    /**
     * Chain time per client (IP) for EVM calls, which run one at a time per network on the
     * embedded chain: a bucket of `burstMs` refilled at `msPerSecond`, so no client holds the
     * chain more than a fifth of the time once its burst is spent.
     */
    evmTimePerClient: { msPerSecond: 200, burstMs: 3_000 },
    /** EVM calls one client may have waiting per network (a batch's members count one each); more are refused at once. */
    maxQueuedEvmCallsPerClient: 16,
    /** EVM calls waiting per network from all clients; more are refused at once with an overload error. */
    maxQueuedEvmCalls: 256,
    /**
     * Bytes of large request bodies (over 64 KiB) the gateway reads and parses at once; a large
     * body that would go over is refused with 503 before it is read. Parsing a 5 MiB body holds
     * the event loop every listener shares for tens of ms, so a few at a time keeps honest calls fast.
     */
    maxBodyBytesInFlight: 12 * 1024 * 1024,
  },
} as const;

export const GATEWAY_DEFAULTS = DEFAULTS.gateway;
export const AUTH_DEFAULTS = DEFAULTS.auth;
export type DefaultGatewayNetwork = { name: string; chainId: number; retiredOn?: string; replacement?: string };
