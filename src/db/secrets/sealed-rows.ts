/**
 * The database's sealed values and the row each is bound to (SecretBox, rowBinding): the stores
 * seal and open them with these, and the sealing step (sealing.ts) reseals them all.
 *
 * | table | column | bound to |
 * |---|---|---|
 * | `s3_access_keys` | `secret` | the access key id |
 * | `worker_secrets` | `value` | account id, script name, secret name |
 * | `log_jobs` | `destinationConf` inside the `job` JSON | the job id |
 */
import { rowBinding, type SecretBox } from '../../core/crypto/secret-box.ts';
import type { LogJobRecord } from '../control-store.ts';

export function accessKeyBinding(accessKeyId: string): string {
  return rowBinding('s3_access_keys', accessKeyId);
}

export function workerSecretBinding(accountId: string, script: string, name: string): string {
  return rowBinding('worker_secrets', accountId, script, name);
}

export function logJobBinding(jobId: number): string {
  return rowBinding('log_jobs', jobId);
}

/** The `job` column of a log job: its record without the id, the destination sealed. */
export function sealedJobJson(job: LogJobRecord, box: SecretBox): string {
  const { id, ...rest } = job;
  return JSON.stringify({ ...rest, destinationConf: box.seal(rest.destinationConf, logJobBinding(id)) });
}

/** A log job from its row: the `job` column with its destination opened. */
export function openedJob(row: { id: number; job: string }, box: SecretBox): LogJobRecord {
  const id = Number(row.id);
  const stored = JSON.parse(row.job) as Omit<LogJobRecord, 'id'>;
  return { ...stored, destinationConf: box.open(stored.destinationConf, logJobBinding(id)), id };
}
