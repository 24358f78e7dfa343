/**
 * The routes the official `cloudflare` SDK (the devDependency) declares, read from its resource
 * files (`node_modules/cloudflare/resources/<group>/...`): each method of each resource class, its
 * HTTP method and path template, as the SDK calls it. A path that starts with
 * `/${accountOrZone}/${accountOrZoneId}` is both an account's and a zone's route.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface SdkRoute {
  /** The method as a user calls it: `workers.scripts.secrets.bulkUpdate`. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below /client/v4, with the SDK's `${name}` placeholders (accountOrZone expanded). */
  template: string;
  /** The method's parameters, in order (`['scriptName', 'params', 'options']`). */
  args: string[];
}

/** The groups edgeport implements (the issue's): their methods are all served or refused by name. */
export const SDK_GROUPS = ['zones', 'rulesets', 'logpush', 'r2', 'workers', 'user', 'accounts', 'memberships'] as const;

function files(path: string): string[] {
  try {
    if (statSync(path).isDirectory()) return readdirSync(path).flatMap((name) => files(join(path, name)));
  } catch {
    return [];
  }
  return path.endsWith('.js') ? [path] : [];
}

const HTTP: Record<string, SdkRoute['method']> = { get: 'GET', getAPIList: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' };

/** Every route of `groups` the installed SDK declares, sorted by name. */
export function sdkRoutes(groups: readonly string[] = SDK_GROUPS): SdkRoute[] {
  const root = join(dirname(createRequire(import.meta.url).resolve('cloudflare')), 'resources');
  const routes: SdkRoute[] = [];
  for (const group of groups) {
    for (const file of [...files(join(root, group)), join(root, `${group}.js`)]) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      const key = /_key = Object\.freeze\(\[([^\]]*)\]/.exec(text)?.[1]?.replace(/[\s']/g, '').replace(/,$/, '').replaceAll(',', '.');
      if (key === undefined) continue;
      const calls = /^ {8}(\w+)\(([^)]*)\) \{$|this\._client\.(\w+)\(\s*(?:\(0, path_1\.path\)\s*)?[`'"]([^`'"]+)[`'"]/gm;
      let method: string | undefined;
      let args: string[] = [];
      for (let match = calls.exec(text); match; match = calls.exec(text)) {
        if (match[1]) {
          method = match[1];
          args = match[2]!
            .split(',')
            .map((arg) => arg.trim().replace(/\s*=.*$/, ''))
            .filter(Boolean);
          continue;
        }
        const http = HTTP[match[3]!];
        if (!http || method === undefined) continue;
        const template = match[4]!;
        const name = `${key}.${method}`;
        if (template.startsWith('/${accountOrZone}/${accountOrZoneId}')) {
          const rest = template.slice('/${accountOrZone}/${accountOrZoneId}'.length);
          routes.push(
            { name: `${name}(account)`, method: http, template: `/accounts/\${account_id}${rest}`, args },
            { name: `${name}(zone)`, method: http, template: `/zones/\${zone_id}${rest}`, args },
          );
        } else {
          routes.push({ name, method: http, template, args });
        }
      }
    }
  }
  return routes.sort((a, b) => a.name.localeCompare(b.name));
}

/** The template with its placeholders filled: the account's and zone's ids where named, else `values[name]` or a plausible id. */
export function fillTemplate(template: string, ids: { account: string; zone: string }, values: Record<string, string> = {}): string {
  return template.replace(/\$\{(\w+)\}/g, (_, name: string) => {
    if (name === 'account_id') return ids.account;
    if (name === 'zone_id') return ids.zone;
    return encodeURIComponent(values[name] ?? 'f'.repeat(32));
  });
}
