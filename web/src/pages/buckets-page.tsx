/**
 * Buckets of the object store: list with each bucket's object count and total size, create (name
 * and default storage class), delete when empty. The counts come from the GraphQL analytics query
 * `wrangler r2 bucket info` uses (r2StorageAdaptiveGroups: a bounded count per bucket, at most
 * 100 buckets a query), asked once the list is shown. Beside them, what the account stores
 * against its quotas (UsagePanel).
 */
import { useState } from 'preact/hooks';
import { call, get, graphql, seg } from '../api.ts';
import { ConfirmButton, Errors, formatBytes, formatDate, ListTable, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { UsagePanel } from '../components/usage-panel.tsx';
import { Link } from '../router.tsx';

interface Bucket {
  name: string;
  creation_date: string;
  storage_class: string;
}

interface Usage {
  objectCount: number;
  payloadSize: number;
}

/** Buckets a usage query may name (the server counts at most 100 at once). */
const USAGE_BATCH = 100;
const USAGE_QUERY = `query BucketUsage($account: String!, $names: [String!]) {
  viewer { accounts(filter: {accountTag: $account}) {
    r2StorageAdaptiveGroups(limit: ${USAGE_BATCH}, filter: {bucketName_in: $names}) { max { objectCount payloadSize } dimensions { bucketName } }
  } }
}`;

async function readUsage(account: string, names: string[]): Promise<Map<string, Usage>> {
  const usage = new Map<string, Usage>();
  for (let i = 0; i < names.length; i += USAGE_BATCH) {
    const data = await graphql<{ viewer: { accounts: Array<{ r2StorageAdaptiveGroups: Array<{ max: Usage; dimensions: { bucketName: string } }> }> } }>(
      USAGE_QUERY,
      { account, names: names.slice(i, i + USAGE_BATCH) },
    );
    for (const group of data.viewer.accounts[0]?.r2StorageAdaptiveGroups ?? []) usage.set(group.dimensions.bucketName, group.max);
  }
  return usage;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export function BucketsPage({ account }: { account: string }) {
  useTitle('Buckets');
  const base = `/accounts/${seg(account)}/store/buckets`;
  const buckets = useLoad(() => get<Bucket[]>(base), [account]);
  const names = buckets.data?.map((b) => b.name).join('\n');
  const usage = useLoad(
    () => (names === undefined || names === '' ? Promise.resolve(new Map<string, Usage>()) : readUsage(account, names.split('\n'))),
    [account, names],
  );
  const usageCell = (name: string, pick: (u: Usage) => string) => {
    if (usage.error !== undefined) return <span class="muted">unknown</span>;
    const u = usage.data?.get(name);
    return u ? (
      pick(u)
    ) : (
      <span class="muted" aria-label="counting">
        …
      </span>
    );
  };
  const [name, setName] = useState('');
  const [storageClass, setStorageClass] = useState('Standard');
  const action = useAction();
  const nameProblem = name === '' || BUCKET_NAME.test(name) ? null : '3 to 63 characters of a-z, 0-9 and -, starting and ending with a letter or digit.';

  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await call('POST', base, { name, storage_class: storageClass });
      setName('');
      buckets.reload();
      return `Bucket ${name} created.`;
    });
  };
  const remove = (bucket: Bucket) =>
    action.run(async () => {
      await call('DELETE', `${base}/${seg(bucket.name)}`);
      buckets.reload();
      return `Bucket ${bucket.name} deleted.`;
    });

  return (
    <>
      <h1>Buckets</h1>
      <p class="lead">The object store's buckets: the same ones scripts reach through bindings and S3 tools through the S3-compatible API.</p>
      <Errors error={action.error} />
      {action.done && <Success>{action.done}</Success>}
      <section aria-labelledby="buckets-list">
        <h2 id="buckets-list">All buckets</h2>
        {usage.error !== undefined && <Errors error={usage.error} title="The buckets' object counts and sizes could not be read" />}
        <ListTable
          list={buckets}
          what="buckets"
          failed="The buckets could not be read"
          empty="No buckets yet."
          head={
            <tr>
              <th scope="col">Name</th>
              <th scope="col" class="numeric">
                Objects
              </th>
              <th scope="col" class="numeric">
                Size
              </th>
              <th scope="col">Storage class</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          }
          row={(bucket) => (
            <tr key={bucket.name}>
              <th scope="row">
                <Link href={`/buckets/${seg(bucket.name)}`}>{bucket.name}</Link>
              </th>
              <td class="numeric" data-label="Objects">
                {usageCell(bucket.name, (u) => u.objectCount.toLocaleString('en-US'))}
              </td>
              <td class="numeric" data-label="Size">
                {usageCell(bucket.name, (u) => formatBytes(u.payloadSize))}
              </td>
              <td data-label="Storage class">{bucket.storage_class}</td>
              <td data-label="Created">{formatDate(bucket.creation_date)}</td>
              <td class="actions">
                <Link href={`/buckets/${seg(bucket.name)}`}>Browse</Link>
                <ConfirmButton label="Delete" confirmLabel={`Delete ${bucket.name}`} onConfirm={() => remove(bucket)} />
              </td>
            </tr>
          )}
        />
      </section>
      <UsagePanel account={account} />
      <section class="panel" aria-labelledby="bucket-create">
        <h2 id="bucket-create">Create a bucket</h2>
        <form onSubmit={create} class="form-grid">
          <div class="field">
            <label for="bucket-name">Name</label>
            <input
              id="bucket-name"
              required
              value={name}
              placeholder="photos"
              spellcheck={false}
              aria-describedby="bucket-name-help"
              aria-invalid={nameProblem ? true : undefined}
              onInput={(e) => setName(e.currentTarget.value)}
            />
            <p id="bucket-name-help" class={nameProblem ? 'field-problem' : 'help'}>
              {nameProblem ?? 'Lower-case letters, digits and hyphens.'}
            </p>
          </div>
          <div class="field">
            <label for="bucket-class">Default storage class</label>
            <select id="bucket-class" value={storageClass} onChange={(e) => setStorageClass(e.currentTarget.value)}>
              <option value="Standard">Standard</option>
              <option value="InfrequentAccess">InfrequentAccess</option>
            </select>
          </div>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={action.busy}>
              Create bucket
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
