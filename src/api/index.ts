/**
 * The management API (`/client/v4`): envelope, authentication, accounts, zones, custom-fields
 * rulesets, log jobs with filters and ownership challenges, S3 access keys; for the web dashboard,
 * sign-in sessions, bucket / object / upload routes, the gateway's networks, and the dashboard's
 * files outside `/client/`. `edgeport start` opens the control store, ensures the first account
 * and serves `createApiService(...).handler`.
 */
export { createApiService, type ApiService, type ApiServiceOptions } from './service.ts';
export { createApiApp, API_PREFIX, API_ROUTES } from './app.ts';
export {
  ensureBootstrapAccount,
  createAccount,
  AccountError,
  ACCOUNT_ERRORS,
  DEFAULT_ADMIN_EMAIL,
  type BootstrapOutcome,
  type NewCredentials,
} from './bootstrap.ts';
export { API_ERRORS, ApiError, type ApiErrorCode } from './errors.ts';
export { openSqliteControlStore, SqliteControlStore } from '../db/sqlite/sqlite-control-store.ts';
export type { ControlStore } from '../db/control-store.ts';
