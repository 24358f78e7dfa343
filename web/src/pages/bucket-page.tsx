/**
 * One bucket, browsed by prefix as folders (delimiter `/`): what the folder holds in all (count and
 * bytes, from .../usage), sub-folders, then objects with size,
 * upload time, storage class, etag and metadata; upload (components/uploader.tsx: many files, a
 * folder, drag and drop, each with a progress bar), download and delete; at the bucket's top level, its CORS rules (components/bucket-cors.tsx).
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { API, ApiFailure, call, get, seg, type Envelope } from '../api.ts';
import { BucketCors } from '../components/bucket-cors.tsx';
import { BucketLifecycle } from '../components/bucket-lifecycle.tsx';
import { ConfirmButton, Errors, formatBytes, formatDate, Loading, Success, useLoad, useTitle } from '../components/common.tsx';
import { Uploader } from '../components/uploader.tsx';
import { Link } from '../router.tsx';
import { objectPath, type StoredObject } from '../uploads.ts';

/** GET .../buckets/:bucket/usage: what the bucket, or a folder of it, holds. */
interface Usage {
  object_count: number;
  payload_size: number;
  upload_count: number;
  complete: boolean;
}

interface Page {
  objects: StoredObject[];
  folders: string[];
  cursor: string | undefined;
}

export function BucketPage({ account, bucket, prefix }: { account: string; bucket: string; prefix: string }) {
  useTitle(`${bucket}${prefix ? ` / ${prefix}` : ''}`);
  const listPath = (cursor?: string) =>
    `/accounts/${seg(account)}/store/buckets/${seg(bucket)}/objects?delimiter=%2F&per_page=200` +
    `${prefix ? `&prefix=${encodeURIComponent(prefix)}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  const readPage = async (cursor?: string): Promise<Page> => {
    const envelope: Envelope<StoredObject[]> = await call('GET', listPath(cursor));
    return { objects: envelope.result, folders: envelope.result_info?.delimited ?? [], cursor: envelope.result_info?.cursor };
  };
  const first = useLoad(() => readPage(), [account, bucket, prefix]);
  const [more, setMore] = useState<Page[]>([]);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const pages = first.data ? [first.data, ...more] : [];
  const cursor = pages.at(-1)?.cursor;
  // What this folder (or the whole bucket) holds, sub-folders included: a bounded count on the server,
  // asked once the bucket is known to be there.
  const listed = first.data !== undefined;
  const usage = useLoad(
    () =>
      listed
        ? get<Usage>(`/accounts/${seg(account)}/store/buckets/${seg(bucket)}/usage${prefix ? `?prefix=${encodeURIComponent(prefix)}` : ''}`)
        : Promise.resolve(undefined),
    [account, bucket, prefix, listed],
  );
  const reload = () => {
    setMore([]);
    first.reload();
    usage.reload();
  };

  const remove = async (object: StoredObject) => {
    setError(undefined);
    setDone(null);
    try {
      await call('DELETE', objectPath(account, bucket, object.key));
      setDone(`Deleted ${object.key}.`);
      reload();
    } catch (e) {
      setError(e);
    }
  };

  const crumbs = prefix.split('/').filter((part) => part !== '');
  const folderHref = (p: string) => `/buckets/${seg(bucket)}${p ? `?prefix=${encodeURIComponent(p)}` : ''}`;
  const objects = pages.flatMap((p) => p.objects);
  const folders = pages.flatMap((p) => p.folders);

  // A bucket that is not there (or not this account's): the API's answer and a way back, no upload form.
  if (!first.data && first.error instanceof ApiFailure && first.error.status === 404) {
    return (
      <>
        <nav aria-label="Breadcrumb" class="breadcrumb">
          <ol>
            <li>
              <Link href="/buckets">Buckets</Link>
            </li>
            <li aria-current="page">{bucket}</li>
          </ol>
        </nav>
        <h1>No such bucket</h1>
        <p class="lead">
          Your account has no bucket named <code class="wrap">{bucket}</code>: it may have been deleted, or the link is wrong.
        </p>
        <Errors error={first.error} title={`The API answered ${first.error.status}`} />
        <p>
          <Link href="/buckets" class="button-link">
            ← Back to your buckets
          </Link>
        </p>
      </>
    );
  }

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <ol>
          <li>
            <Link href="/buckets">Buckets</Link>
          </li>
          <li>{crumbs.length === 0 ? <span aria-current="page">{bucket}</span> : <Link href={folderHref('')}>{bucket}</Link>}</li>
          {crumbs.map((part, i) => {
            const last = i === crumbs.length - 1;
            const p = `${crumbs.slice(0, i + 1).join('/')}/`;
            return <li key={p}>{last ? <span aria-current="page">{part}</span> : <Link href={folderHref(p)}>{part}</Link>}</li>;
          })}
        </ol>
      </nav>
      <h1>{crumbs.length === 0 ? bucket : `${crumbs.at(-1)}/`}</h1>
      <p class="lead">
        {prefix ? (
          <>
            Objects under <code>{prefix}</code> in bucket <code>{bucket}</code>.
          </>
        ) : (
          <>
            Objects in bucket <code>{bucket}</code>, by folder.
          </>
        )}
      </p>
      {usage.data && (
        <p class="usage" role="status" aria-label={prefix ? 'Folder size' : 'Bucket size'}>
          {prefix ? 'This folder' : 'This bucket'} holds{' '}
          <strong>
            {usage.data.complete ? '' : 'at least '}
            {usage.data.object_count.toLocaleString('en-US')} {usage.data.object_count === 1 ? 'object' : 'objects'}
          </strong>
          , <strong>{formatBytes(usage.data.payload_size)}</strong>
          {prefix && ', sub-folders included'}
          {usage.data.upload_count > 0 && (
            <>
              , and {usage.data.upload_count} unfinished multipart {usage.data.upload_count === 1 ? 'upload' : 'uploads'}
            </>
          )}
          .
        </p>
      )}
      <Uploader
        account={account}
        bucket={bucket}
        prefix={prefix}
        onUploaded={() => {
          setDone(null);
          setError(undefined);
          reload();
        }}
      />
      <Errors error={error} />
      {done && <Success>{done}</Success>}
      <section aria-labelledby="objects-title">
        <h2 id="objects-title">Contents</h2>
        {first.error !== undefined && (
          <>
            <Errors error={first.error} title="This bucket could not be listed" />
            <p>
              <Link href="/buckets" class="button-link">
                ← Back to your buckets
              </Link>{' '}
              <button type="button" onClick={reload}>
                Try again
              </button>
            </p>
          </>
        )}
        {!first.data ? (
          first.error === undefined && <Loading what="objects" />
        ) : folders.length === 0 && objects.length === 0 ? (
          <p class="muted">Nothing here yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="objects">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col" class="numeric">
                    Size
                  </th>
                  <th scope="col">Uploaded</th>
                  <th scope="col">Storage class</th>
                  <th scope="col">ETag</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {folders.map((folder) => (
                  <tr key={`folder:${folder}`}>
                    <th scope="row" colSpan={6}>
                      <Link href={folderHref(folder)} class="folder">
                        {folder.slice(prefix.length)}
                      </Link>
                    </th>
                  </tr>
                ))}
                {objects.map((object) => {
                  const name = object.key.slice(prefix.length);
                  const isOpen = open === object.key;
                  const detailsId = `details-${object.version}`;
                  return (
                    <Fragment key={object.key}>
                      <tr>
                        <th scope="row" class="object-name">
                          {name}
                        </th>
                        <td class="numeric" data-label="Size">
                          {formatBytes(object.size)}
                        </td>
                        <td data-label="Uploaded">{formatDate(object.uploaded)}</td>
                        <td data-label="Storage class">{object.storage_class}</td>
                        <td data-label="ETag">
                          <code class="etag" title={object.etag}>
                            {object.etag}
                          </code>
                        </td>
                        <td class="actions">
                          <button
                            type="button"
                            class="button-quiet"
                            aria-expanded={isOpen}
                            aria-controls={detailsId}
                            aria-label={`Metadata of ${name}`}
                            onClick={() => setOpen(isOpen ? null : object.key)}
                          >
                            Metadata
                          </button>
                          <a href={API + objectPath(account, bucket, object.key)} download={name.split('/').at(-1)} aria-label={`Download ${name}`}>
                            Download
                          </a>
                          <ConfirmButton label="Delete" confirmLabel={`Delete ${name}`} onConfirm={() => remove(object)} />
                        </td>
                      </tr>
                      {isOpen && (
                        <tr id={detailsId} class="details-row">
                          <td colSpan={6}>
                            <Metadata object={object} />
                          </td>
                        </tr>
                      )}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        {cursor && (
          <button
            type="button"
            onClick={async () => {
              try {
                const page = await readPage(cursor);
                setMore([...more, page]);
              } catch (e) {
                setError(e);
              }
            }}
          >
            Show more
          </button>
        )}
      </section>
      {prefix === '' && first.data !== undefined && <BucketCors account={account} bucket={bucket} />}
      {prefix === '' && first.data !== undefined && <BucketLifecycle account={account} bucket={bucket} />}
    </>
  );
}

function Metadata({ object }: { object: StoredObject }) {
  const http = Object.entries(object.http_metadata);
  const custom = Object.entries(object.custom_metadata);
  return (
    <div class="metadata">
      <dl>
        <div>
          <dt>Key</dt>
          <dd>
            <code class="wrap">{object.key}</code>
          </dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{object.size.toLocaleString()} bytes</dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>
            <code>{object.version}</code>
          </dd>
        </div>
        <div>
          <dt>ETag</dt>
          <dd>
            <code class="wrap">{object.etag}</code>
          </dd>
        </div>
      </dl>
      <div>
        <h3>HTTP metadata</h3>
        {http.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <dl>
            {http.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        )}
      </div>
      <div>
        <h3>Custom metadata</h3>
        {custom.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <dl>
            {custom.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        )}
      </div>
    </div>
  );
}
