/**
 * Custom log fields of a zone: the request headers, response headers and cookies its log records
 * carry. The rules are checked as the user types and again when a name is added (header names
 * lower case, with a one-click lower-case fix; every name an HTTP token; no name twice; at most 40
 * in all): a name that breaks them is not added. Saving writes one rule to the zone's
 * http_log_custom_fields entry point; a name typed but not added is added by the save, and one that
 * could not be added stops the save with the reason on its field, so "Saved" covers all that was
 * typed. The API decides, and its refusal is shown in its own words.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, seg, type ErrorEntry } from '../api.ts';
import { Errors, Loading, Success, useLoad, useTitle } from '../components/common.tsx';
import { Link } from '../router.tsx';

type Kind = 'request_fields' | 'response_fields' | 'cookie_fields';
type Fields = Record<Kind, string[]>;

const KINDS: ReadonlyArray<{ kind: Kind; title: string; noun: string; example: string; help: string }> = [
  { kind: 'request_fields', title: 'Request headers', noun: 'request header', example: 'content-type', help: 'Logged in RequestHeaders. Lower case.' },
  { kind: 'response_fields', title: 'Response headers', noun: 'response header', example: 'server', help: 'Logged in ResponseHeaders. Lower case.' },
  { kind: 'cookie_fields', title: 'Cookies', noun: 'cookie', example: '__ga', help: 'Logged in Cookies. Case-sensitive, as the browser sends it.' },
];
const MAX_FIELDS = 40;
/** RFC 9110 token: what a header name (and a cookie name) may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PHASE_PATH = (zoneId: string) => `/zones/${seg(zoneId)}/rulesets/phases/http_log_custom_fields/entrypoint`;

interface Rule {
  id: string;
  action_parameters?: Partial<Record<Kind, Array<{ name: string }>>>;
}

/** Why a name would be refused, or null. */
function problemOf(kind: Kind, name: string, others: readonly string[]): string | null {
  if (name === '') return 'A name cannot be empty.';
  if (!TOKEN.test(name))
    return `“${name}” is not a valid ${kind === 'cookie_fields' ? 'cookie' : 'header'} name: use letters, digits and ! # $ % & ' * + - . ^ _ \` | ~ only (no spaces, no colon).`;
  if (kind !== 'cookie_fields' && name !== name.toLowerCase()) return `Header names must be lower case: write “${name.toLowerCase()}”.`;
  if (others.includes(name)) return `“${name}” is already in this list.`;
  return null;
}

export function CustomFieldsPage({ zoneId }: { zoneId: string }) {
  useTitle('Custom fields');
  const loaded = useLoad(async () => {
    try {
      return (await call<{ rules: Rule[] }>('GET', PHASE_PATH(zoneId))).result.rules;
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 404 && error.errors.some((e) => e.code === 10003)) return [];
      throw error;
    }
  }, [zoneId]);
  const [fields, setFields] = useState<Fields | null>(null);
  const [drafts, setDrafts] = useState<Record<Kind, string>>(NO_DRAFTS);
  /** Why the name typed for a kind stopped the last save. */
  const [blocked, setBlocked] = useState<Partial<Record<Kind, string>>>({});
  const [ruleId, setRuleId] = useState<string | undefined>();
  const [saving, setSaving] = useState(false);
  const [refusal, setRefusal] = useState<ErrorEntry[] | null>(null);
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState<string | null>(null);

  useEffect(() => {
    if (!loaded.data) return;
    const merged: Fields = { request_fields: [], response_fields: [], cookie_fields: [] };
    for (const rule of loaded.data) {
      for (const { kind } of KINDS)
        for (const item of rule.action_parameters?.[kind] ?? []) if (!merged[kind].includes(item.name)) merged[kind].push(item.name);
    }
    setFields(merged);
    setRuleId(loaded.data[0]?.id);
  }, [loaded.data]);

  if (loaded.error !== undefined && !fields)
    return (
      <>
        <h1>Custom fields</h1>
        <Errors error={loaded.error} title="The custom fields could not be read" />
      </>
    );
  if (!fields)
    return (
      <>
        <h1>Custom fields</h1>
        <Loading what="custom fields" />
      </>
    );

  const total = KINDS.reduce((n, { kind }) => n + fields[kind].length, 0);
  const update = (kind: Kind, names: string[]) => {
    setFields({ ...fields, [kind]: names });
    setSaved(null);
  };
  const typeDraft = (kind: Kind, text: string) => {
    setDrafts({ ...drafts, [kind]: text });
    setBlocked({ ...blocked, [kind]: undefined });
    setSaved(null);
  };

  const save = async () => {
    setRefusal(null);
    setFailure(undefined);
    setSaved(null);
    // What is typed but not added is part of what the user means to save: add it, or stop here.
    const next: Fields = { ...fields };
    const added: string[] = [];
    const stopped: Partial<Record<Kind, string>> = {};
    for (const { kind, noun } of KINDS) {
      const typed = drafts[kind].trim();
      if (typed === '') continue;
      const problem = problemOf(kind, typed, next[kind]);
      if (problem !== null) stopped[kind] = problem;
      else {
        next[kind] = [...next[kind], typed];
        added.push(`${noun} ${typed}`);
      }
    }
    const nextTotal = KINDS.reduce((n, { kind }) => n + next[kind].length, 0);
    if (Object.keys(stopped).length === 0 && nextTotal > MAX_FIELDS && added.length > 0) {
      for (const { kind } of KINDS) if (drafts[kind].trim() !== '') stopped[kind] = `With it the zone would have ${nextTotal} fields, more than ${MAX_FIELDS}.`;
    }
    const first = KINDS.find(({ kind }) => stopped[kind] !== undefined);
    if (first) {
      setBlocked(stopped);
      document.getElementById(`add-${first.kind}`)?.focus();
      return;
    }
    setBlocked({});
    setFields(next);
    setDrafts(NO_DRAFTS);
    setSaving(true);
    const params: Partial<Record<Kind, Array<{ name: string }>>> = {};
    for (const { kind } of KINDS) if (next[kind].length > 0) params[kind] = next[kind].map((name) => ({ name }));
    const rules =
      Object.keys(params).length === 0
        ? []
        : [
            {
              ...(ruleId ? { id: ruleId } : {}),
              action: 'log_custom_field',
              expression: 'true',
              description: 'Custom log fields (set in the dashboard)',
              enabled: true,
              action_parameters: params,
            },
          ];
    try {
      const result = (await call<{ rules: Rule[] }>('PUT', PHASE_PATH(zoneId), { rules })).result;
      setRuleId(result.rules[0]?.id);
      setSaved(
        `Saved ${nextTotal} ${nextTotal === 1 ? 'field' : 'fields'}${added.length > 0 ? `, with the ${added.join(' and the ')} you had typed` : ''}. The edge logs them from the next request on.`,
      );
    } catch (error) {
      if (error instanceof ApiFailure) setRefusal(error.errors);
      else setFailure(error);
    } finally {
      setSaving(false);
    }
  };

  const stopped = KINDS.filter(({ kind }) => blocked[kind] !== undefined);

  return (
    <>
      <h1>Custom fields</h1>
      <p class="lead">
        Headers and cookies every log record of this zone carries, for the log jobs that select <code>RequestHeaders</code>, <code>ResponseHeaders</code> or{' '}
        <code>Cookies</code> (<Link href={`/zones/${seg(zoneId)}/jobs`}>log jobs</Link>).
      </p>
      <p class={`counter${total > MAX_FIELDS ? ' counter-over' : ''}`} aria-live="polite" id="fields-total">
        {total} of {MAX_FIELDS} fields used{total > MAX_FIELDS ? ` — remove ${total - MAX_FIELDS} to save` : ''}
      </p>
      <div class="columns-3">
        {KINDS.map((k) => (
          <FieldList
            key={k.kind}
            {...k}
            names={fields[k.kind]}
            full={total >= MAX_FIELDS}
            draft={drafts[k.kind]}
            blocked={blocked[k.kind]}
            onDraft={(text) => typeDraft(k.kind, text)}
            onChange={(names) => update(k.kind, names)}
          />
        ))}
      </div>
      {stopped.length > 0 && (
        <div class="notice notice-error" role="alert">
          <p class="notice-title">Nothing was saved: a name typed above could not be added. Fix it or clear its box, then save again.</p>
          <ul>
            {stopped.map(({ kind, noun }) => (
              <li key={kind}>
                <strong>Add a {noun}:</strong> {blocked[kind]}
              </li>
            ))}
          </ul>
        </div>
      )}
      {refusal && <RefusalList errors={refusal} fields={fields} />}
      <Errors error={failure} />
      {saved && <Success>{saved}</Success>}
      <div class="form-actions">
        <button type="button" class="button-primary" disabled={saving} onClick={save}>
          {saving ? 'Saving…' : 'Save custom fields'}
        </button>
      </div>
    </>
  );
}

const NO_DRAFTS: Record<Kind, string> = { request_fields: '', response_fields: '', cookie_fields: '' };

function FieldList({
  kind,
  title,
  noun,
  example,
  help,
  names,
  full,
  draft,
  blocked,
  onDraft,
  onChange,
}: {
  kind: Kind;
  title: string;
  noun: string;
  example: string;
  help: string;
  names: string[];
  full: boolean;
  /** The name typed in the add box, and whether it stopped a save. */
  draft: string;
  blocked: string | undefined;
  onDraft: (text: string) => void;
  onChange: (names: string[]) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const inputId = `add-${kind}`;
  const typed = draft.trim();
  const hint = typed === '' ? null : problemOf(kind, typed, names);
  // An upper-case header name: offer its lower-case form when that one could be added.
  const lower = hint && kind !== 'cookie_fields' && problemOf(kind, typed.toLowerCase(), names) === null ? typed.toLowerCase() : null;
  const addName = (name: string) => {
    onChange([...names, name]);
    onDraft('');
    input.current?.focus();
  };
  const add = (event: Event) => {
    event.preventDefault();
    if (typed === '' || hint !== null || full) return;
    addName(typed);
  };
  const message = hint ?? blocked ?? (typed !== '' && full ? `The zone has ${MAX_FIELDS} fields: remove one to add another.` : null);
  return (
    <section class="panel" aria-labelledby={`${kind}-title`}>
      <h2 id={`${kind}-title`}>{title}</h2>
      <p class="help">{help}</p>
      {names.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="name-list">
          {names.map((name, i) => {
            const problem = problemOf(kind, name, names.slice(0, i));
            return (
              <li key={`${name}-${i}`} class={problem ? 'invalid' : undefined}>
                <code>{name}</code>
                {problem && <span class="field-problem">{problem}</span>}
                <span class="name-actions">
                  <button type="button" class="button-quiet" aria-label={`Remove ${noun} ${name}`} onClick={() => onChange(names.filter((_, j) => j !== i))}>
                    Remove
                  </button>
                </span>
              </li>
            );
          })}
        </ul>
      )}
      <form class="inline-form" onSubmit={add}>
        <div class="field">
          <label for={inputId}>Add a {noun}</label>
          <input
            id={inputId}
            ref={input}
            value={draft}
            placeholder={example}
            autoComplete="off"
            spellcheck={false}
            aria-describedby={`${inputId}-hint`}
            aria-invalid={message || blocked ? true : undefined}
            onInput={(e) => onDraft(e.currentTarget.value)}
          />
        </div>
        <button type="submit" disabled={typed === '' || full}>
          Add
        </button>
      </form>
      <div id={`${inputId}-hint`} aria-live="polite">
        {message && (
          <p class="field-problem">
            {blocked ? 'Not saved: ' : ''}
            {message}
          </p>
        )}
        {lower && (
          <button type="button" class="button-quiet" onClick={() => addName(lower)}>
            Add “{lower}” instead
          </button>
        )}
        {!message && typed !== '' && <p class="help">Press Add (or Enter); saving adds it too.</p>}
      </div>
    </section>
  );
}

/** The API's refusal, each entry placed on the field its pointer names. */
function RefusalList({ errors, fields }: { errors: ErrorEntry[]; fields: Fields }) {
  const where = (pointer: string | undefined): string | null => {
    const m = pointer ? /\/action_parameters\/(request_fields|response_fields|cookie_fields)\/(\d+)/.exec(pointer) : null;
    if (!m) return null;
    const kind = KINDS.find((k) => k.kind === m[1])!;
    const name = fields[kind.kind][Number(m[2])];
    return `${kind.noun[0]!.toUpperCase()}${kind.noun.slice(1)} ${name === undefined ? `#${Number(m[2]) + 1}` : `“${name}”`}`;
  };
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">The API refused these custom fields; nothing was saved:</p>
      <ul>
        {errors.map((e, i) => {
          const place = where(e.source?.pointer);
          return (
            <li key={i}>
              {place && <strong>{place}: </strong>}
              {e.message} <span class="muted">(code {e.code})</span>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
