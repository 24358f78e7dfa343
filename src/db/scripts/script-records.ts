/**
 * The script registry's records: scripts an account deploys through the API, their versions,
 * deployments, secrets, routes and the account's workers.dev-style subdomain. Module contents are
 * base64 (a module may be binary: wasm, data), bounded by the upload limit before they get here.
 */

/** A binding as the version's metadata keeps it (the platform's JSON, validated at upload). */
export type ScriptBinding =
  | { type: 'r2_bucket'; name: string; bucket_name: string }
  | { type: 'plain_text'; name: string; text: string }
  | { type: 'json'; name: string; json: unknown }
  | { type: 'secret_text'; name: string };

export type ModuleType = 'esm' | 'cjs' | 'text' | 'data' | 'wasm' | 'json';

export interface ScriptModule {
  name: string;
  type: ModuleType;
  /** base64 */
  content: string;
}

export interface VersionMetadata {
  mainModule: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  bindings: ScriptBinding[];
  /** `triggeredBy`: what made the version when it was not an upload ('secret': a secret change copied the deployed one). */
  annotations: { message?: string; tag?: string; triggeredBy?: 'secret' };
  /** Where it came from: "api" (an upload) or "wrangler" and the like, as the client said. */
  source: string;
}

export interface VersionRecord {
  id: string;
  accountId: string;
  script: string;
  /** 1, 2, ... per script. */
  number: number;
  created: number;
  metadata: VersionMetadata;
  etag: string;
}

export interface DeploymentRecord {
  id: string;
  accountId: string;
  script: string;
  created: number;
  versionId: string;
  message: string | null;
}

export interface ScriptSettings {
  logpush: boolean;
  tags: string[];
  tail_consumers: Array<{ service: string }>;
  /** As the client sent it (`logs`, `traces`, ... kept); `enabled` always there. */
  observability: { enabled: boolean; head_sampling_rate?: number; [key: string]: unknown };
}

export const DEFAULT_SETTINGS: ScriptSettings = { logpush: false, tags: [], tail_consumers: [], observability: { enabled: false } };

export interface ScriptRecord {
  accountId: string;
  name: string;
  created: number;
  modified: number;
  settings: ScriptSettings;
  devEnabled: boolean;
  /** The version the latest deployment serves, if any. */
  deployment: DeploymentRecord | null;
}

export interface SecretRecord {
  name: string;
  type: 'secret_text';
}

export interface RouteRecord {
  id: string;
  zoneId: string;
  accountId: string;
  pattern: string;
  /** null: a route that disables scripts for its pattern. */
  script: string | null;
  /** A custom domain's route (`<hostname>/*`, made by attaching the hostname to the script); absent: false. */
  customDomain?: boolean;
}

/** What an instance's edge needs to serve a deployed script; `key` changes whenever it must restart. */
export interface ServedScript {
  accountId: string;
  name: string;
  key: string;
  versionId: string;
  devEnabled: boolean;
}

export interface ServingState {
  scripts: ServedScript[];
  routes: Array<{ pattern: string; accountId: string; script: string | null }>;
  subdomains: Array<{ accountId: string; subdomain: string }>;
}

/** A version with what its host needs: modules and the secrets' values. */
export interface RunnableVersion {
  version: VersionRecord;
  modules: ScriptModule[];
  secrets: Record<string, string>;
}
