/**
 * What `edgeport backup` writes and `edgeport restore` reads: `<dir>/edgeport-backup.json` (the
 * manifest), `<dir>/metadata.sqlite` (SQLite only), `<dir>/blobs/` (object bodies, when they are
 * files), `<dir>/gateway/` (the embedded chains' journals) and, only when asked for,
 * `<dir>/secrets.key` (backup-secrets.ts); and where the bodies live for a
 * config: the data dir's `blobs/`, a `[blobs] url = "file:///..."` directory's, or nowhere local (S3).
 */
import type { Config } from '../config/schema.ts';
import { parseBlobsUrl } from '../store/blobs/open-blob-store.ts';
import type { SkippedEntry } from './tree-copy.ts';

export const MANIFEST_FILE = 'edgeport-backup.json';
export const DATABASE_FILE = 'metadata.sqlite';
export const BLOBS_DIR = 'blobs';
export const CHAIN_DIR = 'gateway';

export interface BackupManifest {
  format: 1;
  /** The edgeport version that wrote it. */
  version: string;
  /** ISO time the database snapshot was taken. */
  created: string;
  /** `sqlite`: metadata.sqlite is in the backup; `postgresql`: back the database up with pg_dump. */
  database: 'sqlite' | 'postgresql';
  /** Whether blobs/ holds the bodies (false: they live in an S3 bucket, backed up apart). */
  blobs: boolean;
  objects: { blobFiles: number; bytes: number };
  /**
   * Entries of the data dir's `blobs/` and `gateway/` (or of the `[blobs] url` directory) that were
   * not copied because they are not files or folders: symbolic links (never followed), fifos,
   * sockets, devices. Present only when there were some; `entries` lists the first 1000.
   */
  skipped?: { count: number; entries: SkippedEntry[] };
  /** The id of the secrets key the database is sealed with (SQLite), absent before sealing. */
  secretsKeyId?: string;
  /** Whether `secrets.key` (the key) is in the backup: only with `--include-secrets-key`. */
  secretsKeyIncluded?: boolean;
}

/**
 * The directory whose `blobs/` holds the blob files of `config`: the data dir, or the `[blobs] url`
 * directory; undefined when they are in S3.
 */
export function blobsRoot(config: Readonly<Config>): string | undefined {
  if (config.blobsUrl === undefined) return config.dataDir;
  const location = parseBlobsUrl(config.blobsUrl);
  return location.kind === 'fs' ? location.root : undefined;
}
