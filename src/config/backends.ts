/**
 * `[db]`, `[blobs]` and `[disk]` of edgeport.toml: where metadata and object bodies live, how long
 * a call to each may take before it counts as an outage (a BackendFault: clients are told to
 * retry), and how much room the data dir's file system must keep. Defaults and their reasons are
 * in DEFAULTS.backends (src/config/defaults.ts).
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults.ts';

const timeoutMs = z.number().int().min(100).max(600_000);

export const dbSectionSchema = z.strictObject({
  /** `postgres://...`; absent: SQLite in the data dir. */
  url: z.string().min(1).optional(),
  /** Deadline of every statement and of getting a connection (PostgreSQL). */
  timeout_ms: timeoutMs.optional(),
});

export const blobsSectionSchema = z.strictObject({
  /** `file:///dir` or `s3://bucket/prefix?...`; absent: the data dir's `blobs/`. */
  url: z.string().min(1).optional(),
  /** Deadline of each call to an `s3://` store (an answer to it, or a byte moving on its connection). */
  timeout_ms: timeoutMs.optional(),
});

export const diskSectionSchema = z.strictObject({
  /** Below this many free bytes under the data dir, writes are refused and /readyz fails. */
  min_free_bytes: z
    .number()
    .int()
    .min(0)
    .max(2 ** 50)
    .optional(),
  /** Bytes kept in `<data dir>/disk-reserve` and given up on a full disk so that deletes go through; 0: none. */
  reserve_bytes: z
    .number()
    .int()
    .min(0)
    .max(2 ** 34)
    .optional(),
});

export interface BackendsConfig {
  dbTimeoutMs: number;
  blobsTimeoutMs: number;
  disk: { minFreeBytes: number; reserveBytes: number };
}

/** Fills defaults into validated `[db]`, `[blobs]` and `[disk]` sections. */
export function toBackendsConfig(
  db: z.infer<typeof dbSectionSchema> | undefined,
  blobs: z.infer<typeof blobsSectionSchema> | undefined,
  disk: z.infer<typeof diskSectionSchema> | undefined,
): BackendsConfig {
  const d = DEFAULTS.backends;
  return {
    dbTimeoutMs: db?.timeout_ms ?? d.dbTimeoutMs,
    blobsTimeoutMs: blobs?.timeout_ms ?? d.blobsTimeoutMs,
    disk: { minFreeBytes: disk?.min_free_bytes ?? d.minFreeDiskBytes, reserveBytes: disk?.reserve_bytes ?? d.diskReserveBytes },
  };
}
