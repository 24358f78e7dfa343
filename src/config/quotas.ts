/**
 * The `[quotas]` section of edgeport.toml: what each account may store (object bytes and count,
 * script bytes) and how many versions of a script are kept. Defaults and their reasons are in
 * DEFAULTS.quotas (src/config/defaults.ts); the operator may set an account's own with
 * `edgeport accounts quota`.
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults.ts';

/** A size or count where 0 means "no limit". */
const amountOrOff = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const quotasSectionSchema = z.strictObject({
  max_object_bytes_per_account: amountOrOff.optional(),
  max_objects_per_account: amountOrOff.optional(),
  max_script_bytes_per_account: amountOrOff.optional(),
  max_versions_per_script: z.number().int().min(1).max(10_000).optional(),
});

export type QuotasSection = z.infer<typeof quotasSectionSchema>;

/**
 * Every account's quotas unless the operator set its own (0: no limit). Object bytes count the
 * bodies of stored objects and the parts of open multipart uploads; script bytes the modules of
 * every kept version of every script.
 */
export interface AccountQuotas {
  maxObjectBytes: number;
  maxObjects: number;
  maxScriptBytes: number;
  /** Versions of a script kept: the newest, and the deployed one besides. */
  maxVersionsPerScript: number;
}

/** Fills defaults into a validated `[quotas]` section. */
export function toAccountQuotas(section: QuotasSection | undefined): AccountQuotas {
  const d = DEFAULTS.quotas;
  return {
    maxObjectBytes: section?.max_object_bytes_per_account ?? d.maxObjectBytes,
    maxObjects: section?.max_objects_per_account ?? d.maxObjects,
    maxScriptBytes: section?.max_script_bytes_per_account ?? d.maxScriptBytes,
    maxVersionsPerScript: section?.max_versions_per_script ?? d.maxVersionsPerScript,
  };
}
