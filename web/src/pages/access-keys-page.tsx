/**
 * S3 access keys of the account: list them (GET .../store/access-keys), make one with a permission
 * and, for object permissions, the buckets it is limited to (POST; its secret is shown here once,
 * with copy buttons, and never again), revoke one (DELETE). Also how to use a key: the S3 endpoint
 * (GET .../store/s3-endpoint), region `auto`, path-style requests.
 */
import { useRef, useState } from 'preact/hooks';
import { call, get, seg } from '../api.ts';
import { ConfirmButton, Errors, formatDate, ListTable, Loading, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { Link } from '../router.tsx';

type Permission = 'admin_read_write' | 'admin_read_only' | 'object_read_write' | 'object_read_only';

interface AccessKey {
  access_key_id: string;
  permission: Permission;
  buckets: string[] | null;
  created_on: string;
  revoked_on: string | null;
  status: 'active' | 'revoked';
}

interface NewKey {
  access_key_id: string;
  secret_access_key: string;
  permission: Permission;
  buckets: string[] | null;
}

interface S3Endpoint {
  endpoint: string | null;
  region: string;
}

const PERMISSIONS: ReadonlyArray<{ value: Permission; label: string; help: string }> = [
  { value: 'admin_read_write', label: 'Admin read & write', help: 'Every bucket of the account: list, create and delete buckets; read and write objects.' },
  { value: 'admin_read_only', label: 'Admin read only', help: 'Every bucket of the account: list buckets, read objects.' },
  { value: 'object_read_write', label: 'Object read & write', help: 'Read and write objects, in the buckets you choose (or all).' },
  { value: 'object_read_only', label: 'Object read only', help: 'Read objects, in the buckets you choose (or all).' },
];

const labelOf = (permission: Permission) => PERMISSIONS.find((p) => p.value === permission)?.label ?? permission;

/** The AWS SDK for JavaScript set up for this server, with the given key (or placeholders). */
function sdkSnippet(endpoint: string, region: string, id: string, secret: string): string {
  return `import { S3Client } from '@aws-sdk/client-s3';

const s3 = new S3Client({
  endpoint: '${endpoint}',
  region: '${region}',
  forcePathStyle: true,
  credentials: { accessKeyId: '${id}', secretAccessKey: '${secret}' },
});`;
}

export function AccessKeysPage({ account }: { account: string }) {
  useTitle('S3 access keys');
  const base = `/accounts/${seg(account)}/store`;
  const keys = useLoad(() => get<AccessKey[]>(`${base}/access-keys`), [account]);
  const s3 = useLoad(() => get<S3Endpoint>(`${base}/s3-endpoint`), [account]);
  const buckets = useLoad(() => get<Array<{ name: string }>>(`${base}/buckets`), [account]);
  const [permission, setPermission] = useState<Permission>('admin_read_write');
  const [chosen, setChosen] = useState<string[]>([]);
  const [made, setMade] = useState<NewKey | null>(null);
  const action = useAction();
  const madeHeading = useRef<HTMLHeadingElement>(null);
  const limited = permission.startsWith('object_');
  const endpoint = s3.data?.endpoint ?? null;
  const region = s3.data?.region ?? 'auto';

  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = { permission, ...(limited && chosen.length > 0 ? { buckets: chosen } : {}) };
      const key = (await call<NewKey>('POST', `${base}/access-keys`, body)).result;
      setMade(key);
      setPermission('admin_read_write');
      setChosen([]);
      keys.reload();
      requestAnimationFrame(() => madeHeading.current?.focus());
    });
  };
  const revoke = (key: AccessKey) =>
    action.run(async () => {
      await call('DELETE', `${base}/access-keys/${seg(key.access_key_id)}`);
      if (made?.access_key_id === key.access_key_id) setMade(null);
      keys.reload();
      return `Key ${key.access_key_id} revoked: requests signed with it are refused within a second.`;
    });

  return (
    <>
      <h1>S3 access keys</h1>
      <p class="lead">
        Keys that S3 tools and SDKs sign their requests with to reach this account's <Link href="/buckets">buckets</Link>. Each key can be limited to reading,
        or to objects in some buckets; a revoked key stops working within a second.
      </p>
      <Errors error={action.error} />
      {action.done && <Success>{action.done}</Success>}

      {made && (
        <section class="panel panel-secret" aria-labelledby="made-title">
          <h2 id="made-title" ref={madeHeading} tabIndex={-1}>
            New key {made.access_key_id}
          </h2>
          <div class="notice notice-warning">
            <p class="notice-title">Copy the secret now: this is the only time it is shown.</p>
            <p>The server never shows it again, here or through the API. If it is lost, revoke this key and create another.</p>
          </div>
          <div class="secret-fields">
            <div class="field">
              <label for="made-id">Access key ID</label>
              <div class="secret-row">
                <input id="made-id" class="mono" readOnly value={made.access_key_id} onFocus={(e) => e.currentTarget.select()} />
                <CopyButton text={made.access_key_id} label="Copy access key ID" what="the access key ID" />
              </div>
            </div>
            <div class="field">
              <label for="made-secret">Secret access key</label>
              <div class="secret-row">
                <input id="made-secret" class="mono" readOnly value={made.secret_access_key} onFocus={(e) => e.currentTarget.select()} />
                <CopyButton text={made.secret_access_key} label="Copy secret" what="the secret" />
              </div>
            </div>
          </div>
          <p class="small">
            {labelOf(made.permission)}
            {made.buckets ? `, limited to ${made.buckets.join(', ')}` : made.permission.startsWith('object_') ? ', every bucket' : ''}.
            {endpoint && <> With the AWS SDK for JavaScript:</>}
          </p>
          {endpoint && (
            <>
              <pre tabIndex={0} aria-label="AWS SDK setup with this key">
                {sdkSnippet(endpoint, region, made.access_key_id, made.secret_access_key)}
              </pre>
              <CopyButton text={sdkSnippet(endpoint, region, made.access_key_id, made.secret_access_key)} label="Copy code" what="the code" />
            </>
          )}
          <div class="form-actions">
            <button type="button" class="button-primary" onClick={() => setMade(null)}>
              I have saved the secret
            </button>
          </div>
        </section>
      )}

      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <ListTable
          list={keys}
          what="access keys"
          failed="The keys could not be read"
          empty="No keys yet: create one below."
          head={
            <tr>
              <th scope="col">Access key ID</th>
              <th scope="col">Permission</th>
              <th scope="col">Buckets</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          }
          row={(key) => (
            <tr key={key.access_key_id}>
              <th scope="row">
                <code>{key.access_key_id}</code>
              </th>
              <td data-label="Permission">{labelOf(key.permission)}</td>
              <td data-label="Buckets">{key.buckets ? key.buckets.join(', ') : <span class="muted">all</span>}</td>
              <td data-label="Created">{formatDate(key.created_on)}</td>
              <td data-label="Status">
                {key.status === 'active' ? (
                  <span class="badge badge-ok">active</span>
                ) : (
                  <>
                    <span class="badge">revoked</span> <span class="small">{formatDate(key.revoked_on)}</span>
                  </>
                )}
              </td>
              <td class="actions">
                {key.status === 'active' && <ConfirmButton label="Revoke" confirmLabel={`Revoke ${key.access_key_id}`} onConfirm={() => revoke(key)} />}
              </td>
            </tr>
          )}
        />
      </section>

      <section class="panel" aria-labelledby="create-key-title">
        <h2 id="create-key-title">Create a key</h2>
        <form onSubmit={create} class="stack">
          <fieldset class="choices">
            <legend>Permission</legend>
            {PERMISSIONS.map((p) => (
              <label key={p.value} class="choice">
                <input type="radio" name="permission" value={p.value} checked={permission === p.value} onChange={() => setPermission(p.value)} />
                <span>
                  <span class="choice-label">{p.label}</span> <span class="help">{p.help}</span>
                </span>
              </label>
            ))}
          </fieldset>
          {limited && (
            <fieldset class="choices">
              <legend>Buckets</legend>
              {buckets.error !== undefined && <Errors error={buckets.error} title="The buckets could not be read" />}
              {buckets.data === undefined ? (
                buckets.error === undefined && <Loading what="buckets" />
              ) : buckets.data.length === 0 ? (
                <p class="muted">The account has no buckets yet: the key will reach every bucket it gets.</p>
              ) : (
                buckets.data.map((b) => (
                  <label key={b.name} class="choice">
                    <input
                      type="checkbox"
                      checked={chosen.includes(b.name)}
                      onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, b.name] : chosen.filter((n) => n !== b.name))}
                    />
                    <span class="choice-label">{b.name}</span>
                  </label>
                ))
              )}
              <p class="help">{chosen.length === 0 ? 'None chosen: every bucket of the account, including ones made later.' : `Only ${chosen.join(', ')}.`}</p>
            </fieldset>
          )}
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={action.busy}>
              Create key
            </button>
          </div>
        </form>
      </section>

      <section class="panel" aria-labelledby="connect-title">
        <h2 id="connect-title">How to use a key</h2>
        {s3.error !== undefined && <Errors error={s3.error} title="The S3 endpoint could not be read" />}
        {s3.data !== undefined &&
          (endpoint === null ? (
            <p class="muted">This server runs no S3-compatible API.</p>
          ) : (
            <>
              <dl class="facts">
                <div>
                  <dt>Endpoint</dt>
                  <dd>
                    <code class="wrap">{endpoint}</code>
                  </dd>
                </div>
                <div>
                  <dt>Region</dt>
                  <dd>
                    <code>{region}</code>
                  </dd>
                </div>
                <div>
                  <dt>Addressing</dt>
                  <dd>
                    path-style (<code>{endpoint}/bucket/key</code>)
                  </dd>
                </div>
              </dl>
              <p>Any S3 client that signs with AWS Signature Version 4 works. With the AWS SDK for JavaScript:</p>
              <pre tabIndex={0} aria-label="AWS SDK setup">
                {sdkSnippet(endpoint, region, '<access key id>', '<secret access key>')}
              </pre>
            </>
          ))}
      </section>
    </>
  );
}
