/** Small pieces every page uses: loading data, showing the API's refusals, two-step deletes, formats. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messagesOf } from '../api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload); the newest answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (run === latest.current) setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (run === latest.current) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** A page's writes: `run` shows busy while one runs, then its message or the API's refusal. */
export interface Action {
  busy: boolean;
  error: unknown;
  done: string | null;
  /** Runs `write`; its string (if any) is shown as done, what it throws as the error. */
  run(write: () => Promise<string | void>): Promise<void>;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string | null>(null);
  const run = useCallback(async (write: () => Promise<string | void>) => {
    setBusy(true);
    setError(undefined);
    setDone(null);
    try {
      const message = await write();
      if (message) setDone(message);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, done, run };
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · edgeport`;
  }, [title]);
}

/** The API's refusal, in its own words, announced to screen readers. */
export function Errors({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  const messages = messagesOf(error);
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">{title ?? 'The server refused this'}</p>
      {messages.length === 1 ? (
        <p>{messages[0]}</p>
      ) : (
        <ul>
          {messages.map((m, i) => (
            <li key={i}>{m}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Success({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice notice-success" role="status">
      {children}
    </div>
  );
}

/** A delete that asks once more in place ("Delete" -> "Delete <what>?" / "Cancel"). */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  disabled,
}: {
  label: string;
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="button-danger-quiet" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <button
        type="button"
        class="button-danger"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" class="button-quiet" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/**
 * A list read with useLoad, as a table: why it could not be read, "loading", `empty` when it has
 * nothing, else `head` and one `row` per item.
 */
export function ListTable<T>({
  list,
  what,
  failed,
  empty,
  head,
  row,
}: {
  list: Loaded<T[]>;
  what: string;
  failed: string;
  empty: string;
  head: ComponentChildren;
  row: (item: T) => ComponentChildren;
}) {
  return (
    <>
      {list.error !== undefined && <Errors error={list.error} title={failed} />}
      {list.data === undefined ? (
        list.error === undefined && <Loading what={what} />
      ) : list.data.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>{head}</thead>
            <tbody>{list.data.map(row)}</tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
