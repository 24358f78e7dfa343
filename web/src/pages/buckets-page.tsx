/** Buckets of the object store: list, create (name and default storage class), delete when empty. */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api.ts';
import { ConfirmButton, Errors, formatDate, Loading, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { Link } from '../router.tsx';

interface Bucket {
  name: string;
  creation_date: string;
  storage_class: string;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export function BucketsPage({ account }: { account: string }) {
  useTitle('Buckets');
  const base = `/accounts/${seg(account)}/store/buckets`;
  const buckets = useLoad(() => get<Bucket[]>(base), [account]);
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
  const remove = (bucket: Bucket) => action.run(async () => {
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
        {buckets.error !== undefined && <Errors error={buckets.error} title="The buckets could not be read" />}
        {buckets.data === undefined ? buckets.error === undefined && <Loading what="buckets" /> : buckets.data.length === 0 ? <p class="muted">No buckets yet.</p> : (
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Storage class</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {buckets.data.map((bucket) => (
                  <tr key={bucket.name}>
                    <th scope="row"><Link href={`/buckets/${seg(bucket.name)}`}>{bucket.name}</Link></th>
                    <td data-label="Storage class">{bucket.storage_class}</td>
                    <td data-label="Created">{formatDate(bucket.creation_date)}</td>
                    <td class="actions">
                      <Link href={`/buckets/${seg(bucket.name)}`}>Browse</Link>
                      <ConfirmButton label="Delete" confirmLabel={`Delete ${bucket.name}`} onConfirm={() => remove(bucket)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section class="panel" aria-labelledby="bucket-create">
        <h2 id="bucket-create">Create a bucket</h2>
        <form onSubmit={create} class="form-grid">
          <div class="field">
            <label for="bucket-name">Name</label>
            <input id="bucket-name" required value={name} placeholder="photos" spellcheck={false} aria-describedby="bucket-name-help" aria-invalid={nameProblem ? true : undefined}
              onInput={(e) => setName(e.currentTarget.value)} />
            <p id="bucket-name-help" class={nameProblem ? 'field-problem' : 'help'}>{nameProblem ?? 'Lower-case letters, digits and hyphens.'}</p>
          </div>
          <div class="field">
            <label for="bucket-class">Default storage class</label>
            <select id="bucket-class" value={storageClass} onChange={(e) => setStorageClass(e.currentTarget.value)}>
              <option value="Standard">Standard</option>
              <option value="InfrequentAccess">InfrequentAccess</option>
            </select>
          </div>
          <div class="form-actions"><button type="submit" class="button-primary" disabled={action.busy}>Create bucket</button></div>
        </form>
      </section>
    </>
  );
}
