/**
 * How a new version of a script is stored, whatever made it (an upload, a settings change): the
 * account's script quota checked first, the version tried in workerd (a script that cannot start
 * is refused with the exception it threw, and whatever was deployed keeps serving), then stored,
 * with the secrets and script-level settings it carried, deployed at once when asked.
 */
import type { UploadOutcome } from '../../db/scripts/script-registry.ts';
import { ApiError } from '../errors.ts';
import type { PreparedUpload } from './script-upload.ts';
import type { WorkersDeps } from './workers-common.ts';

/** When an upload that found too many others waiting for their trial start is told to come back. */
const BUSY_RETRY_S = 5;

export async function storeVersion(
  workers: WorkersDeps,
  accountId: string,
  name: string,
  prepared: PreparedUpload,
  options: { deploy: boolean; now: number },
): Promise<Extract<UploadOutcome, { kind: 'ok' }>> {
  const { deploy, now } = options;
  // Before the trial start, which is costly: an upload past the account's script quota is refused now (and again, exactly, as it is stored).
  const refusal = await workers.registry.quotaRefusal(accountId, name, prepared.version, deploy);
  if (refusal) throw refusal;
  const secrets = { ...(await workers.registry.secretValues(accountId, name)), ...prepared.secrets };
  const failure = await workers.tryStart({
    version: { id: 'trial', accountId, script: name, number: 0, created: now, metadata: prepared.version.metadata, etag: prepared.version.etag },
    modules: prepared.version.modules,
    secrets,
  });
  if (typeof failure === 'object' && failure !== null) {
    const who = failure.refused === 'account' ? 'your account has as many script uploads being tried as it may' : 'too many script uploads are being tried';
    throw new ApiError(failure.refused === 'account' ? 'API_WORKER_UPLOADS_IN_FLIGHT' : 'API_WORKER_BUSY', {
      message: `Please wait and consider throttling your request speed: ${who}; retry after ${BUSY_RETRY_S} s`,
      headers: { 'retry-after': String(BUSY_RETRY_S) },
    });
  }
  if (failure !== null) throw new ApiError('API_WORKER_START_FAILED', { message: failure });
  const { message } = prepared.version.metadata.annotations;
  const outcome = await workers.registry.uploadVersion(accountId, name, prepared.version, {
    deploy,
    maxScripts: workers.maxScriptsPerAccount,
    settings: prepared.settings,
    ...(message === undefined ? {} : { message }),
  });
  if (outcome.kind === 'limit') {
    throw new ApiError('API_WORKER_LIMIT', {
      message: `You have exceeded the limit of ${outcome.limit} Workers on your account: delete one, or ask the operator to raise [workers] max_scripts_per_account`,
    });
  }
  if (Object.keys(prepared.secrets).length > 0) await workers.registry.setSecrets(accountId, name, prepared.secrets, { asVersion: false });
  return outcome;
}
