/**
 * A bucket's CORS rules on its page: what pages on other origins may do with the bucket in a
 * browser (presigned PUT/GET, form uploads). Lists the rules, adds, edits and removes one; every
 * change sends the whole list (PUT .../cors), so the server's validation decides, in its words.
 */
import { useState } from 'preact/hooks';
import { call, seg } from '../api.ts';
import { ConfirmButton, Errors, Loading, Success, useAction, useLoad } from './common.tsx';

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'] as const;

export interface CorsRuleJson {
  id?: string;
  allowed: { origins: string[]; methods: string[]; headers?: string[] };
  exposeHeaders?: string[];
  maxAgeSeconds?: number;
}

/** The form's fields: lists one item per line. */
interface Draft {
  id: string;
  origins: string;
  methods: string[];
  headers: string;
  expose: string;
  maxAge: string;
}

const EMPTY: Draft = { id: '', origins: '', methods: ['GET'], headers: '', expose: '', maxAge: '' };

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

function toDraft(rule: CorsRuleJson): Draft {
  return {
    id: rule.id ?? '',
    origins: rule.allowed.origins.join('\n'),
    methods: rule.allowed.methods,
    headers: (rule.allowed.headers ?? []).join('\n'),
    expose: (rule.exposeHeaders ?? []).join('\n'),
    maxAge: rule.maxAgeSeconds === undefined ? '' : String(rule.maxAgeSeconds),
  };
}

function fromDraft(draft: Draft): CorsRuleJson {
  const headers = lines(draft.headers);
  const expose = lines(draft.expose);
  const maxAge = draft.maxAge.trim();
  return {
    ...(draft.id.trim() !== '' ? { id: draft.id.trim() } : {}),
    allowed: { origins: lines(draft.origins), methods: METHODS.filter((m) => draft.methods.includes(m)), ...(headers.length > 0 ? { headers } : {}) },
    ...(expose.length > 0 ? { exposeHeaders: expose } : {}),
    ...(maxAge !== '' ? { maxAgeSeconds: Number(maxAge) } : {}),
  };
}

export function BucketCors({ account, bucket }: { account: string; bucket: string }) {
  const path = `/accounts/${seg(account)}/store/buckets/${seg(bucket)}/cors`;
  const rules = useLoad(async () => (await call<{ rules: CorsRuleJson[] }>('GET', path)).result.rules, [account, bucket]);
  const action = useAction();
  /** The rule being edited: its index, or `new`; null when the form is closed. */
  const [editing, setEditing] = useState<number | 'new' | null>(null);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const current = rules.data ?? [];

  const save = (next: CorsRuleJson[], message: string) =>
    action.run(async () => {
      await call('PUT', path, { rules: next });
      setEditing(null);
      rules.reload();
      return message;
    });
  const submit = (event: Event) => {
    event.preventDefault();
    const rule = fromDraft(draft);
    const next = editing === 'new' || editing === null ? [...current, rule] : current.map((r, i) => (i === editing ? rule : r));
    void save(next, editing === 'new' ? 'Added the rule.' : 'Saved the rule.');
  };
  const set = (field: keyof Draft) => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [field]: e.currentTarget.value });

  return (
    <section class="panel" aria-labelledby="cors-title">
      <h2 id="cors-title">CORS</h2>
      <p class="help">
        Which pages on other origins may use this bucket from a browser (presigned URLs, upload forms). The S3 API's PutBucketCors sets the same rules.
      </p>
      {rules.error !== undefined && <Errors error={rules.error} title="The CORS rules could not be read" />}
      {rules.data === undefined ? (
        rules.error === undefined && <Loading what="CORS rules" />
      ) : current.length === 0 ? (
        <p class="muted">No rules: browsers on other origins are refused.</p>
      ) : (
        <div class="table-wrap">
          <table class="cors-rules">
            <thead>
              <tr>
                <th scope="col">Origins</th>
                <th scope="col">Methods</th>
                <th scope="col">Allowed headers</th>
                <th scope="col">Exposed headers</th>
                <th scope="col" class="numeric">
                  Max age
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {current.map((rule, i) => {
                const name = rule.id ?? `rule ${i + 1}`;
                return (
                  <tr key={i}>
                    <th scope="row">
                      {rule.id && <span class="muted">{rule.id}: </span>}
                      {rule.allowed.origins.join(', ')}
                    </th>
                    <td data-label="Methods">{rule.allowed.methods.join(', ')}</td>
                    <td data-label="Allowed headers">{(rule.allowed.headers ?? []).join(', ') || '—'}</td>
                    <td data-label="Exposed headers">{(rule.exposeHeaders ?? []).join(', ') || '—'}</td>
                    <td class="numeric" data-label="Max age">
                      {rule.maxAgeSeconds === undefined ? '—' : `${rule.maxAgeSeconds} s`}
                    </td>
                    <td class="actions">
                      <button
                        type="button"
                        class="button-quiet"
                        aria-label={`Edit ${name}`}
                        disabled={action.busy}
                        onClick={() => {
                          setDraft(toDraft(rule));
                          setEditing(i);
                        }}
                      >
                        Edit
                      </button>
                      <ConfirmButton
                        label="Remove"
                        confirmLabel={`Remove ${name}`}
                        disabled={action.busy}
                        onConfirm={() =>
                          save(
                            current.filter((_, j) => j !== i),
                            `Removed ${name}.`,
                          )
                        }
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {action.done && <Success>{action.done}</Success>}
      <Errors error={action.error} title="The CORS rules were not saved" />
      {editing === null ? (
        rules.data !== undefined && (
          <p>
            <button
              type="button"
              disabled={action.busy}
              onClick={() => {
                setDraft(EMPTY);
                setEditing('new');
              }}
            >
              Add a rule
            </button>
          </p>
        )
      ) : (
        <form class="form-grid" onSubmit={submit} aria-label={editing === 'new' ? 'New CORS rule' : 'Edit CORS rule'}>
          <div class="field field-wide">
            <label for="cors-origins">Allowed origins</label>
            <textarea id="cors-origins" rows={3} spellcheck={false} value={draft.origins} onInput={set('origins')} aria-describedby="cors-origins-help" />
            <p id="cors-origins-help" class="help">
              One per line, with at most one <code>*</code>: <code>https://app.example.com</code>, <code>https://*.example.com</code>, or <code>*</code> for
              any.
            </p>
          </div>
          <fieldset class="choices">
            <legend>Allowed methods</legend>
            {METHODS.map((method) => (
              <label key={method} class="choice">
                <input
                  type="checkbox"
                  checked={draft.methods.includes(method)}
                  onChange={(e) =>
                    setDraft({ ...draft, methods: e.currentTarget.checked ? [...draft.methods, method] : draft.methods.filter((m) => m !== method) })
                  }
                />
                <span class="choice-label">{method}</span>
              </label>
            ))}
          </fieldset>
          <div class="field">
            <label for="cors-headers">Allowed headers</label>
            <textarea id="cors-headers" rows={3} spellcheck={false} value={draft.headers} onInput={set('headers')} aria-describedby="cors-headers-help" />
            <p id="cors-headers-help" class="help">
              Request headers pages may send, one per line (<code>content-type</code>, <code>x-amz-meta-*</code>, <code>*</code>).
            </p>
          </div>
          <div class="field">
            <label for="cors-expose">Exposed headers</label>
            <textarea id="cors-expose" rows={3} spellcheck={false} value={draft.expose} onInput={set('expose')} aria-describedby="cors-expose-help" />
            <p id="cors-expose-help" class="help">
              Response headers pages may read, one per line (<code>ETag</code>).
            </p>
          </div>
          <div class="field">
            <label for="cors-max-age">Max age (seconds)</label>
            <input id="cors-max-age" type="number" min={0} step={1} value={draft.maxAge} onInput={set('maxAge')} aria-describedby="cors-max-age-help" />
            <p id="cors-max-age-help" class="help">
              How long browsers may reuse a preflight's answer; empty for their default.
            </p>
          </div>
          <div class="field">
            <label for="cors-id">ID (optional)</label>
            <input id="cors-id" spellcheck={false} value={draft.id} onInput={set('id')} />
          </div>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={action.busy}>
              {editing === 'new' ? 'Add rule' : 'Save rule'}
            </button>
            <button type="button" class="button-quiet" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
