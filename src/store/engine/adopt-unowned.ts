/**
 * The first account adopts what no account owns: buckets stored under a bare name and S3 keys
 * without an owner, made by versions of edgeport before buckets and keys belonged to accounts, or
 * by `edgeport dev` on a data dir with no account yet. `edgeport start` runs it at every start
 * (a no-op once done), after the first account exists.
 */
import type { MetadataStore } from '../../db/metadata-store.ts';

export interface Adoption {
  /** Buckets that became the account's, with their objects and uploads. */
  buckets: string[];
  /** Buckets left as they were: the account already has a bucket of that name. */
  conflicts: string[];
  accessKeys: number;
}

export async function adoptUnowned(meta: MetadataStore, accountId: string): Promise<Adoption> {
  const { adopted, conflicts } = await meta.adoptBuckets(accountId);
  const accessKeys = await meta.adoptAccessKeys(accountId);
  return { buckets: adopted, conflicts, accessKeys };
}
