/**
 * What `edgeport backup` writes and `edgeport restore` reads: `<dir>/edgeport-backup.json` (the
 * manifest), `<dir>/metadata.sqlite` (SQLite only), `<dir>/blobs/` (object bodies, when they are
 * files) and `<dir>/gateway/` (the embedded chains' journals); and where the bodies live for a
 * config: the data dir's `blobs/`, a `[blobs] url = "file:///..."` directory's, or nowhere local (S3).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/schema.ts';
import { parseBlobsUrl } from '../store/blobs/open-blob-store.ts';

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
}

/** The directory holding the blob files of `config` (`<root>/blobs`), or undefined when they are in S3. */
export function blobFilesDir(config: Readonly<Config>): string | undefined {
  if (config.blobsUrl === undefined) return join(config.dataDir, BLOBS_DIR);
  const location = parseBlobsUrl(config.blobsUrl);
  return location.kind === 'fs' ? join(location.root, BLOBS_DIR) : undefined;
}

/** Copies the files of `from` into `to` (made if missing); answers how many. */
export function copyFiles(from: string, to: string): number {
  mkdirSync(to, { recursive: true });
  let files = 0;
  for (const name of readdirSync(from)) {
    copyFileSync(join(from, name), join(to, name));
    files += 1;
  }
  return files;
}
