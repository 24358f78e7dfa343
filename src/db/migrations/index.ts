/** The ordered list of schema migrations; each carries its SQL per dialect. */
import { objectStore } from './0001-object-store.ts';
import { s3AccessKeys } from './0002-s3-access-keys.ts';
import { controlPlane } from './0003-control-plane.ts';
import { dashboardSessions } from './0004-dashboard-sessions.ts';
import { partChecksums } from './0005-part-checksums.ts';
import { inlineBodiesRowid } from './0006-inline-bodies-rowid.ts';
import { accountOwnedKeys } from './0007-account-owned-keys.ts';
import { zoneNameReversed } from './0008-zone-name-reversed.ts';
import { sessionsByAccount } from './0009-sessions-by-account.ts';
import { bucketCors } from './0010-bucket-cors.ts';
import { objectPartChecksums } from './0011-object-part-checksums.ts';
import { completedUploads } from './0012-completed-uploads.ts';
import { logJobLocations } from './0013-log-job-locations.ts';
import { apiTokens } from './0014-api-tokens.ts';
import { scriptRegistry } from './0015-script-registry.ts';
import { accountQuotas } from './0016-account-quotas.ts';
import { sealedSecrets } from './0017-sealed-secrets.ts';
import { lifecycleAndSseC } from './0018-lifecycle-and-sse-c.ts';
import { rulesetHistoryPublicBuckets } from './0019-ruleset-history-public-buckets.ts';
import { objectBodiesById } from './0020-object-bodies-by-id.ts';

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  /** The same schema for PostgreSQL (src/db/postgres): BIGINT epoch ms, BYTEA bytes and object keys (UTF-8), names in "C" order. */
  postgres: string;
}

export const MIGRATIONS: readonly Migration[] = [
  objectStore,
  s3AccessKeys,
  controlPlane,
  dashboardSessions,
  partChecksums,
  inlineBodiesRowid,
  accountOwnedKeys,
  zoneNameReversed,
  sessionsByAccount,
  bucketCors,
  objectPartChecksums,
  completedUploads,
  logJobLocations,
  apiTokens,
  scriptRegistry,
  accountQuotas,
  sealedSecrets,
  lifecycleAndSseC,
  rulesetHistoryPublicBuckets,
  objectBodiesById,
];
