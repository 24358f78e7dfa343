/** Every server default in one place (DESIGN.md "Public contracts"). */
export const DEFAULTS = {
  /** Where metadata and blobs live for the embedded default. */
  dataDir: './.edgeport',
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
} as const;
