/**
 * A bucket's lifecycle rules on its page: what the store does by itself as objects and uploads
 * age (delete them, move them to Infrequent Access, abort unfinished uploads). Lists the rules,
 * adds one, turns one on or off, removes one; every change sends the whole list (PUT .../lifecycle,
 * the R2 route wrangler uses), so the server's validation decides, in its words.
 */
import { useState } from 'preact/hooks';
import { call, seg } from '../api.ts';
import { ConfirmButton, Errors, Loading, Success, useAction, useLoad } from './common.tsx';

type Condition = { type: 'Age'; maxAge: number } | { type: 'Date'; date: string };

export interface LifecycleRuleJson {
  id: string;
  enabled: boolean;
  conditions: { prefix?: string };
  deleteObjectsTransition?: { condition: Condition };
  storageClassTransitions?: Array<{ condition: Condition; storageClass: 'InfrequentAccess' }>;
  abortMultipartUploadsTransition?: { condition: { type: 'Age'; maxAge: number } };
}

interface Draft {
  id: string;
  prefix: string;
  expireDays: string;
  iaDays: string;
  abortDays: string;
}

const EMPTY: Draft = { id: '', prefix: '', expireDays: '', iaDays: '', abortDays: '' };
const DAY = 86_400;

function describe(condition: Condition): string {
  if (condition.type === 'Date') return `on ${condition.date.slice(0, 10)}`;
  const days = condition.maxAge / DAY;
  return Number.isInteger(days) ? `after ${days} day${days === 1 ? '' : 's'}` : `after ${condition.maxAge} s`;
}

function actions(rule: LifecycleRuleJson): string {
  const out: string[] = [];
  if (rule.deleteObjectsTransition) out.push(`Delete objects ${describe(rule.deleteObjectsTransition.condition)}`);
  for (const transition of rule.storageClassTransitions ?? []) out.push(`Move to Infrequent Access ${describe(transition.condition)}`);
  if (rule.abortMultipartUploadsTransition) out.push(`Abort unfinished uploads ${describe(rule.abortMultipartUploadsTransition.condition)}`);
  return out.join('; ') || '—';
}

/** Days typed in the form as a condition (whole days; the server refuses what it cannot take). */
const age = (days: string): { type: 'Age'; maxAge: number } => ({ type: 'Age', maxAge: Math.round(Number(days) * DAY) });

function fromDraft(draft: Draft): LifecycleRuleJson {
  const rule: LifecycleRuleJson = { id: draft.id.trim(), enabled: true, conditions: { prefix: draft.prefix } };
  if (draft.expireDays.trim() !== '') rule.deleteObjectsTransition = { condition: age(draft.expireDays) };
  if (draft.iaDays.trim() !== '') rule.storageClassTransitions = [{ condition: age(draft.iaDays), storageClass: 'InfrequentAccess' }];
  if (draft.abortDays.trim() !== '') rule.abortMultipartUploadsTransition = { condition: age(draft.abortDays) };
  return rule;
}

export function BucketLifecycle({ account, bucket }: { account: string; bucket: string }) {
  const path = `/accounts/${seg(account)}/r2/buckets/${seg(bucket)}/lifecycle`;
  const rules = useLoad(async () => (await call<{ rules: LifecycleRuleJson[] }>('GET', path)).result.rules, [account, bucket]);
  const action = useAction();
  const [adding, setAdding] = useState(false);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const current = rules.data ?? [];

  const save = (next: LifecycleRuleJson[], message: string) =>
    action.run(async () => {
      await call('PUT', path, { rules: next });
      setAdding(false);
      rules.reload();
      return message;
    });
  const submit = (event: Event) => {
    event.preventDefault();
    const rule = fromDraft(draft);
    void save([...current, rule], `Added the rule ${rule.id}.`);
  };
  const set = (field: keyof Draft) => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [field]: e.currentTarget.value });

  return (
    <section class="panel" aria-labelledby="lifecycle-title">
      <h2 id="lifecycle-title">Lifecycle rules</h2>
      <p class="help">
        What the store does by itself as objects age: delete them, move them to Infrequent Access, abort unfinished multipart uploads. Applied about every
        minute. S3's PutBucketLifecycleConfiguration and <code>wrangler r2 bucket lifecycle</code> set the same rules.
      </p>
      {rules.error !== undefined && <Errors error={rules.error} title="The lifecycle rules could not be read" />}
      {rules.data === undefined ? (
        rules.error === undefined && <Loading what="lifecycle rules" />
      ) : current.length === 0 ? (
        <p class="muted">No rules: objects stay until deleted (unfinished uploads are aborted after 7 days).</p>
      ) : (
        <div class="table-wrap">
          <table class="lifecycle-rules">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Prefix</th>
                <th scope="col">Actions</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {current.map((rule, i) => (
                <tr key={rule.id}>
                  <th scope="row">{rule.id}</th>
                  <td data-label="Prefix">{rule.conditions.prefix ? <code>{rule.conditions.prefix}</code> : <span class="muted">every object</span>}</td>
                  <td data-label="Actions">{actions(rule)}</td>
                  <td data-label="Status">{rule.enabled ? 'On' : 'Off'}</td>
                  <td class="actions">
                    <button
                      type="button"
                      class="button-quiet"
                      aria-label={`${rule.enabled ? 'Turn off' : 'Turn on'} ${rule.id}`}
                      disabled={action.busy}
                      onClick={() =>
                        save(
                          current.map((r, j) => (j === i ? { ...r, enabled: !r.enabled } : r)),
                          `Turned ${rule.enabled ? 'off' : 'on'} ${rule.id}.`,
                        )
                      }
                    >
                      {rule.enabled ? 'Turn off' : 'Turn on'}
                    </button>
                    <ConfirmButton
                      label="Remove"
                      confirmLabel={`Remove ${rule.id}`}
                      disabled={action.busy}
                      onConfirm={() =>
                        save(
                          current.filter((_, j) => j !== i),
                          `Removed ${rule.id}.`,
                        )
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {action.done && <Success>{action.done}</Success>}
      <Errors error={action.error} title="The lifecycle rules were not saved" />
      {!adding ? (
        rules.data !== undefined && (
          <p>
            <button
              type="button"
              disabled={action.busy}
              onClick={() => {
                setDraft(EMPTY);
                setAdding(true);
              }}
            >
              Add a lifecycle rule
            </button>
          </p>
        )
      ) : (
        <form class="form-grid" onSubmit={submit} aria-label="New lifecycle rule">
          <div class="field">
            <label for="lifecycle-id">Name</label>
            <input id="lifecycle-id" required spellcheck={false} value={draft.id} onInput={set('id')} />
          </div>
          <div class="field">
            <label for="lifecycle-prefix">Prefix</label>
            <input id="lifecycle-prefix" spellcheck={false} value={draft.prefix} onInput={set('prefix')} aria-describedby="lifecycle-prefix-help" />
            <p id="lifecycle-prefix-help" class="help">
              Objects whose key starts with it (<code>logs/</code>); empty for every object.
            </p>
          </div>
          <div class="field">
            <label for="lifecycle-expire">Delete objects after (days)</label>
            <input id="lifecycle-expire" type="number" min={1} step={1} value={draft.expireDays} onInput={set('expireDays')} />
          </div>
          <div class="field">
            <label for="lifecycle-ia">Move to Infrequent Access after (days)</label>
            <input id="lifecycle-ia" type="number" min={1} step={1} value={draft.iaDays} onInput={set('iaDays')} />
          </div>
          <div class="field">
            <label for="lifecycle-abort">Abort unfinished uploads after (days)</label>
            <input id="lifecycle-abort" type="number" min={1} step={1} value={draft.abortDays} onInput={set('abortDays')} />
          </div>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={action.busy}>
              Add rule
            </button>
            <button type="button" class="button-quiet" onClick={() => setAdding(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
