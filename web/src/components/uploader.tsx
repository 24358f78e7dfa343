/**
 * A bucket folder's upload panel: files chosen (several at once), a folder chosen (its files keep
 * their paths below the folder being browsed), or either dropped on the panel; then uploaded
 * FILES_AT_ONCE at a time, each with its own progress bar and, when the store refuses it, its own
 * error. One file alone gets an editable object key. What went up is summed up in one message and
 * leaves the list; what failed stays, with its reason, to retry or clear.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { messagesOf } from '../api.ts';
import { filesOfDrop, filesOfInput, FILES_AT_ONCE, runBounded, uploadFile, type ChosenFile } from '../uploads.ts';
import { Errors, formatBytes, Success } from './common.tsx';

type ItemState = 'ready' | 'waiting' | 'uploading' | 'failed';

interface Item {
  id: number;
  file: File;
  key: string;
  sent: number;
  state: ItemState;
  error?: unknown;
}

let nextId = 1;

export function Uploader({ account, bucket, prefix, onUploaded }: { account: string; bucket: string; prefix: string; onUploaded: () => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [uploading, setUploading] = useState(false);
  const [dragging, setDragging] = useState(false);
  /** The last run's outcome: what was stored. */
  const [result, setResult] = useState<{ keys: string[]; bytes: number } | null>(null);
  const [error, setError] = useState<unknown>();
  const abort = useRef<AbortController | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  // The list and a finished upload's message go away when the page moves to another folder.
  useEffect(() => {
    setItems([]);
    setResult(null);
  }, [prefix]);
  // webkitdirectory is no attribute Preact's types know: set it on the element.
  useEffect(() => {
    folderInput.current?.setAttribute('webkitdirectory', '');
  }, []);

  const choose = (chosen: ChosenFile[]) => {
    setResult(null);
    setError(undefined);
    if (chosen.length === 0) return;
    setItems(chosen.map(({ file, path }) => ({ id: nextId++, file, key: `${prefix}${path}`, sent: 0, state: 'ready' })));
  };
  const update = (id: number, change: Partial<Item>) => setItems((list) => list.map((item) => (item.id === id ? { ...item, ...change } : item)));

  const start = async (event: Event) => {
    event.preventDefault();
    const run = items.filter((item) => item.state === 'ready' || item.state === 'failed').map((item) => ({ ...item, key: item.key.trim() }));
    if (run.length === 0 || run.some((item) => item.key === '')) return;
    setUploading(true);
    setResult(null);
    setError(undefined);
    setItems((list) =>
      list.map((item) => (run.some((r) => r.id === item.id) ? { ...item, key: item.key.trim(), state: 'waiting', sent: 0, error: undefined } : item)),
    );
    const controller = new AbortController();
    abort.current = controller;
    const stored: Array<{ id: number; key: string; size: number }> = [];
    await runBounded(run, FILES_AT_ONCE, async (item) => {
      if (controller.signal.aborted) {
        update(item.id, { state: 'failed', error: new Error('the upload was cancelled before this file began.') });
        return;
      }
      update(item.id, { state: 'uploading' });
      try {
        const object = await uploadFile(account, bucket, item.key, item.file, (n) => update(item.id, { sent: Math.min(n, item.file.size) }), controller.signal);
        stored.push({ id: item.id, key: object.key, size: object.size });
      } catch (e) {
        update(item.id, { state: 'failed', error: e });
      }
    });
    // What went up leaves the list (one message says so); what failed stays with its reason.
    const done = new Set(stored.map((s) => s.id));
    setItems((list) => list.filter((item) => !done.has(item.id)));
    if (stored.length > 0) {
      setResult({ keys: stored.map((s) => s.key), bytes: stored.reduce((sum, s) => sum + s.size, 0) });
      onUploaded();
    }
    if (fileInput.current) fileInput.current.value = '';
    if (folderInput.current) folderInput.current.value = '';
    setUploading(false);
  };

  const onDrop = async (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (uploading || !event.dataTransfer) return;
    try {
      choose(await filesOfDrop(event.dataTransfer));
    } catch (e) {
      setError(e);
    }
  };

  const failed = items.filter((item) => item.state === 'failed');
  const pending = items.filter((item) => item.state === 'ready' || item.state === 'failed');
  const single = items.length === 1 ? items[0]! : null;
  const totalBytes = items.reduce((sum, item) => sum + item.file.size, 0);

  return (
    <section
      class={`panel uploader${dragging ? ' uploader-dragging' : ''}`}
      aria-labelledby="upload-title"
      onDragOver={(e) => {
        e.preventDefault();
        if (!uploading) setDragging(true);
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <h2 id="upload-title">Upload</h2>
      <p class="help drop-hint">
        Choose files or a folder, or drop them here. A folder's files keep their paths below <code>{prefix || '/'}</code>.
      </p>
      <form class="form-grid" onSubmit={start}>
        <div class="field">
          <label for="upload-file">Files</label>
          <input id="upload-file" ref={fileInput} type="file" multiple disabled={uploading} onChange={(e) => choose(filesOfInput(e.currentTarget.files))} />
        </div>
        <div class="field">
          <label for="upload-folder">Folder</label>
          <input id="upload-folder" ref={folderInput} type="file" multiple disabled={uploading} onChange={(e) => choose(filesOfInput(e.currentTarget.files))} />
        </div>
        {single && single.state === 'ready' && (
          <div class="field field-wide">
            <label for="upload-key">Object key</label>
            <input
              id="upload-key"
              value={single.key}
              spellcheck={false}
              placeholder={`${prefix}name.ext`}
              aria-describedby="upload-key-help"
              onInput={(e) => update(single.id, { key: e.currentTarget.value })}
            />
            <p id="upload-key-help" class="help">
              Slashes make folders: <code>reports/2026/summary.pdf</code>. Files over 8 MiB go up in parts.
            </p>
          </div>
        )}
        <div class="form-actions">
          <button type="submit" class="button-primary" disabled={pending.length === 0 || pending.some((item) => item.key.trim() === '') || uploading}>
            {failed.length > 0 && failed.length === pending.length
              ? `Retry ${failed.length === 1 ? 'the failed file' : `${failed.length} failed files`}`
              : 'Upload'}
          </button>
          {uploading && (
            <button type="button" class="button-quiet" onClick={() => abort.current?.abort()}>
              Cancel upload
            </button>
          )}
          {!uploading && items.length > 0 && (
            <button type="button" class="button-quiet" onClick={() => setItems([])}>
              Clear the list
            </button>
          )}
        </div>
      </form>
      {items.length > 0 && (
        <>
          <p class="small upload-summary">
            {items.length === 1 ? '1 file' : `${items.length} files`}, {formatBytes(totalBytes)}
            {uploading && `: ${FILES_AT_ONCE} at a time`}
          </p>
          <ul class="upload-list" aria-label="Files to upload" tabIndex={0}>
            {items.map((item) => (
              <UploadRow key={item.id} item={item} />
            ))}
          </ul>
        </>
      )}
      {result && (
        <Success>
          {result.keys.length === 1 ? (
            <>
              Uploaded <code class="wrap">{result.keys[0]}</code> ({formatBytes(result.bytes)}).
            </>
          ) : (
            <>
              Uploaded {result.keys.length} files ({formatBytes(result.bytes)}).
            </>
          )}
        </Success>
      )}
      <Errors error={error} title="The dropped files could not be read" />
    </section>
  );
}

function UploadRow({ item }: { item: Item }) {
  const percent = item.file.size > 0 ? Math.floor((item.sent / item.file.size) * 100) : 0;
  const progressId = `upload-progress-${item.id}`;
  return (
    <li class={`upload-item upload-item-${item.state}`}>
      <span class="upload-key">
        <code class="wrap" title={item.key}>
          {item.key}
        </code>{' '}
        <span class="muted small">{formatBytes(item.file.size)}</span>
      </span>
      {(item.state === 'uploading' || item.state === 'waiting') && (
        <span class="upload-progress">
          <label for={progressId} class="visually-hidden">
            Uploading {item.key}
          </label>
          <progress id={progressId} max={100} value={percent} aria-valuetext={`${percent}%`} />
          <span class="upload-percent">
            {item.state === 'waiting' ? 'waiting' : `${formatBytes(item.sent)} of ${formatBytes(item.file.size)} (${percent}%)`}
          </span>
        </span>
      )}
      {item.state === 'failed' && (
        <span class="upload-error" role="alert">
          Not uploaded: {messagesOf(item.error).join('; ')}
        </span>
      )}
    </li>
  );
}
