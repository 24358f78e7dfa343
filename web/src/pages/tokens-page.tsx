/**
 * API tokens of the signed-in user: list them (GET /user/tokens), make one from a permission picker
 * (per service: none, read or edit; zone services on every zone or one zone; an optional expiry)
 * whose value is shown here once (POST /user/tokens), roll one (PUT .../value: a new value, shown
 * once, the old one refused at once), delete one. The picker writes the policies the API reads
 * (docs/management-api.md, "API tokens").
 */
import { useRef, useState } from 'preact/hooks';
import { call, get, seg } from '../api.ts';
import { ConfirmButton, Errors, formatDate, ListTable, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { CopyButton } from '../components/copy-button.tsx';

interface Token {
  id: string;
  name: string;
  status: 'active' | 'disabled' | 'expired';
  issued_on: string;
  expires_on?: string;
  policies: Array<{ effect: 'allow' | 'deny'; resources: Record<string, unknown>; permission_groups: Array<{ id: string; name: string }> }>;
}

type Scope = 'user' | 'account' | 'zone';
type Level = 'none' | 'read' | 'edit';

/** The services a token can be given, with the platform's permission groups for read and edit. */
const SERVICES: ReadonlyArray<{ key: string; label: string; scope: Scope; read: string; edit: string; help: string }> = [
  {
    key: 'zones',
    label: 'Zones',
    scope: 'zone',
    read: 'c8fed203ed3043cba015a93ad1616f1f',
    edit: 'e6d2666161e84845a636613608cee8d5',
    help: 'Zones and their settings; creating one needs every zone.',
  },
  {
    key: 'logs',
    label: 'Logs',
    scope: 'zone',
    read: 'c4a30cd58c5d42619c86a3c36c441e2d',
    edit: '3e0b5820118e47f3922f7c989e673882',
    help: 'Log jobs, ownership challenges and custom log fields.',
  },
  {
    key: 'routes',
    label: 'Workers routes',
    scope: 'zone',
    read: '2072033d694d415a936eaeb94e6405b8',
    edit: '28f4b596e7d643029c524985477ae49a',
    help: 'Which paths of a zone run a script.',
  },
  {
    key: 'store',
    label: 'Workers R2 Storage',
    scope: 'account',
    read: 'b4992e1108244f5d8bfbd5744320c2e1',
    edit: 'bf7481a1826f439697cb59a20b22293e',
    help: 'Buckets, objects, CORS rules and S3 keys.',
  },
  {
    key: 'scripts',
    label: 'Workers Scripts',
    scope: 'account',
    read: '1a71c399035b4950a1bd1466bbe4f420',
    edit: 'e086da7e2179491d91ee5f35b3ca210a',
    help: 'Deploying scripts, their secrets and versions.',
  },
  {
    key: 'account',
    label: 'Account Settings',
    scope: 'account',
    read: 'c1fde68c7bcc44588cbb6ddbc16d6480',
    edit: '1af1fa2adc104452b74a9a3364202f20',
    help: 'The account and its memberships (wrangler whoami reads them).',
  },
  {
    key: 'tokens',
    label: 'API Tokens',
    scope: 'user',
    read: '0cc3a61731504c89b99ec1be78b77aa0',
    edit: '686d18d5ac6c441c867cbf6771e58a0a',
    help: 'Your tokens: edit lets the token make tokens of any permission.',
  },
];

const ALL_ZONES = '*';

/** The policies of the picker's choices: one per scope that has a group. */
function policiesOf(levels: Record<string, Level>, zone: string, account: string, userId: string): unknown[] {
  const groups = (scope: Scope) =>
    SERVICES.filter((s) => s.scope === scope && levels[s.key] !== 'none').map((s) => ({ id: levels[s.key] === 'edit' ? s.edit : s.read }));
  const resources: Record<Scope, Record<string, string>> = {
    user: { [`com.cloudflare.api.user.${userId}`]: '*' },
    account: { [`com.cloudflare.api.account.${account}`]: '*' },
    zone: zone === ALL_ZONES ? { [`com.cloudflare.api.account.${account}`]: '*' } : { [`com.cloudflare.api.account.zone.${zone}`]: '*' },
  };
  return (['account', 'zone', 'user'] as const)
    .filter((scope) => groups(scope).length > 0)
    .map((scope) => ({ effect: 'allow', resources: resources[scope], permission_groups: groups(scope) }));
}

/** What a token may do, in words: its groups' names, and where when only some zones. */
function describe(token: Token, zones: Array<{ id: string; name: string }>): string {
  return token.policies
    .map((policy) => {
      const names = policy.permission_groups.map((g) => g.name).join(', ');
      const zone = Object.keys(policy.resources)
        .find((key) => key.startsWith('com.cloudflare.api.account.zone.'))
        ?.slice('com.cloudflare.api.account.zone.'.length);
      const where = zone === undefined ? '' : ` on ${zone === '*' ? 'every zone' : (zones.find((z) => z.id === zone)?.name ?? zone)}`;
      return `${policy.effect === 'deny' ? 'deny ' : ''}${names}${where}`;
    })
    .join('; ');
}

export function TokensPage({ account }: { account: string }) {
  useTitle('API tokens');
  const tokens = useLoad(() => get<Token[]>('/user/tokens?per_page=100'), [account]);
  const zones = useLoad(() => get<Array<{ id: string; name: string }>>('/zones?per_page=50'), [account]);
  const user = useLoad(() => get<{ id: string }>('/user'), [account]);
  const [name, setName] = useState('');
  const [levels, setLevels] = useState<Record<string, Level>>(Object.fromEntries(SERVICES.map((s) => [s.key, 'none'])));
  const [zone, setZone] = useState(ALL_ZONES);
  const [expires, setExpires] = useState('');
  const [shown, setShown] = useState<{ id: string; name: string; value: string; rolled: boolean } | null>(null);
  const action = useAction();
  const shownHeading = useRef<HTMLHeadingElement>(null);
  const chosen = SERVICES.filter((s) => levels[s.key] !== 'none');
  const usesZones = chosen.some((s) => s.scope === 'zone');

  const reveal = (value: { id: string; name: string; value: string; rolled: boolean }) => {
    setShown(value);
    tokens.reload();
    requestAnimationFrame(() => shownHeading.current?.focus());
  };
  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (!user.data) throw new Error('Your user could not be read: reload the page.');
      const body = {
        name: name.trim(),
        policies: policiesOf(levels, zone, account, user.data.id),
        ...(expires === '' ? {} : { expires_on: new Date(`${expires}T23:59:59Z`).toISOString() }),
      };
      const made = (await call<Token & { value: string }>('POST', '/user/tokens', body)).result;
      reveal({ id: made.id, name: made.name, value: made.value, rolled: false });
      setName('');
      setLevels(Object.fromEntries(SERVICES.map((s) => [s.key, 'none'])));
      setExpires('');
    });
  };
  const roll = (token: Token) =>
    action.run(async () => {
      const value = (await call<string>('PUT', `/user/tokens/${seg(token.id)}/value`)).result;
      reveal({ id: token.id, name: token.name, value, rolled: true });
    });
  const remove = (token: Token) =>
    action.run(async () => {
      await call('DELETE', `/user/tokens/${seg(token.id)}`);
      if (shown?.id === token.id) setShown(null);
      tokens.reload();
      return `Token ${token.name} deleted: requests with it are refused from now on.`;
    });

  return (
    <>
      <h1>API tokens</h1>
      <p class="lead">
        Tokens authenticate API clients (<code>Authorization: Bearer</code>, wrangler's <code>CLOUDFLARE_API_TOKEN</code>) with only the permissions you give
        them, on this account only. Unlike the account's key, a token can be limited, rolled and deleted.
      </p>
      <Errors error={action.error} />
      {action.done && <Success>{action.done}</Success>}

      {shown && (
        <section class="panel panel-secret" aria-labelledby="shown-title">
          <h2 id="shown-title" ref={shownHeading} tabIndex={-1}>
            {shown.rolled ? `New value of ${shown.name}` : `New token ${shown.name}`}
          </h2>
          <div class="notice notice-warning">
            <p class="notice-title">Copy the token now: this is the only time it is shown.</p>
            <p>
              The server keeps only a hash of it. If it is lost, roll the token (or delete it and create another).
              {shown.rolled ? ' The old value no longer works.' : ''}
            </p>
          </div>
          <div class="field">
            <label for="shown-value">Token</label>
            <div class="secret-row">
              <input id="shown-value" class="mono" readOnly value={shown.value} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={shown.value} label="Copy token" what="the token" />
            </div>
          </div>
          <div class="form-actions">
            <button type="button" class="button-primary" onClick={() => setShown(null)}>
              I have saved the token
            </button>
          </div>
        </section>
      )}

      <section aria-labelledby="tokens-title">
        <h2 id="tokens-title">Your tokens</h2>
        <ListTable
          list={tokens}
          what="tokens"
          failed="The tokens could not be read"
          empty="No tokens yet: create one below."
          head={
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Permissions</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          }
          row={(token) => (
            <tr key={token.id}>
              <th scope="row">{token.name}</th>
              <td data-label="Permissions">{describe(token, zones.data ?? [])}</td>
              <td data-label="Created">{formatDate(token.issued_on)}</td>
              <td data-label="Expires">{token.expires_on ? formatDate(token.expires_on) : <span class="muted">never</span>}</td>
              <td data-label="Status">
                <span class={token.status === 'active' ? 'badge badge-ok' : 'badge'}>{token.status}</span>
              </td>
              <td class="actions">
                <ConfirmButton label="Roll" confirmLabel={`Roll ${token.name}`} onConfirm={() => roll(token)} />
                <ConfirmButton label="Delete" confirmLabel={`Delete ${token.name}`} onConfirm={() => remove(token)} />
              </td>
            </tr>
          )}
        />
      </section>

      <section class="panel" aria-labelledby="create-token-title">
        <h2 id="create-token-title">Create a token</h2>
        <form onSubmit={create} class="stack">
          <div class="field">
            <label for="token-name">Name</label>
            <input id="token-name" required maxLength={120} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="ci deploys" />
          </div>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Permissions</caption>
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">None</th>
                  <th scope="col">Read</th>
                  <th scope="col">Edit</th>
                </tr>
              </thead>
              <tbody>
                {SERVICES.map((service) => (
                  <tr key={service.key}>
                    <th scope="row">
                      {service.label} <span class="help">{service.help}</span>
                    </th>
                    {(['none', 'read', 'edit'] as const).map((level) => (
                      <td key={level} data-label={level}>
                        <input
                          type="radio"
                          name={`level-${service.key}`}
                          aria-label={`${service.label}: ${level}`}
                          checked={levels[service.key] === level}
                          onChange={() => setLevels({ ...levels, [service.key]: level })}
                        />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {usesZones && (
            <div class="field">
              <label for="token-zone">Zones</label>
              <select id="token-zone" value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
                <option value={ALL_ZONES}>Every zone of the account</option>
                {(zones.data ?? []).map((z) => (
                  <option key={z.id} value={z.id}>
                    {z.name}
                  </option>
                ))}
              </select>
            </div>
          )}
          <div class="field">
            <label for="token-expires">Expires (optional, end of that day UTC)</label>
            <input id="token-expires" type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
          </div>
          <p class="help">
            {chosen.length === 0 ? 'Choose at least one permission.' : `The token may ${chosen.map((s) => `${levels[s.key]} ${s.label}`).join(', ')}.`}
          </p>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={action.busy || chosen.length === 0 || name.trim() === ''}>
              Create token
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
