/**
 * Create or edit a log job: destination (with its ownership challenge when it is file:// or
 * store://), fields, sample rate, timestamp format, enabled, and the filter builder. The API checks
 * everything again when the job is saved; its refusal is shown as it words it, but for a missing or
 * wrong ownership token, which is said at the ownership step in the page's terms. An existing job
 * also shows the newest lines it delivered.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, get, seg } from '../api.ts';
import { DeliveredLines } from '../components/delivered-lines.tsx';
import { FieldPicker } from '../components/field-picker.tsx';
import { FilterBuilder, filterText, newGroup, parseFilterText, type FieldTypes, type FilterGroup } from '../components/filter-builder.tsx';
import { Errors, formatDate, Loading, Success, useLoad, useTitle } from '../components/common.tsx';
import { needsOwnership, OwnershipStep } from '../components/ownership-step.tsx';
import { catalogPath, type DatasetCatalog, type Job } from '../jobs.ts';
import { Link, navigate } from '../router.tsx';

const DEFAULT_FIELDS = ['RayID', 'EdgeStartTimestamp', 'ClientIP', 'ClientRequestMethod', 'ClientRequestPath', 'EdgeResponseStatus'];
const TIMESTAMP_FORMATS = [
  { value: 'unixnano', label: 'unixnano (nanoseconds since 1970)' },
  { value: 'unix', label: 'unix (seconds since 1970)' },
  { value: 'rfc3339', label: 'rfc3339 (2026-11-23T10:15:02Z)' },
  { value: 'rfc3339ms', label: 'rfc3339ms (milliseconds)' },
  { value: 'rfc3339ns', label: 'rfc3339ns (nanoseconds)' },
];
const NAME = /^[a-zA-Z0-9\-.]*$/;

interface Draft {
  name: string;
  destination: string;
  token: string;
  enabled: boolean;
  fields: string[];
  sampleRate: string;
  timestampFormat: string;
  filter: FilterGroup;
  /** The filter text could not be shown in the builder (edited elsewhere): keep it unless replaced. */
  rawFilter: string | null;
}

export function JobEditorPage({ zoneId, jobId, account }: { zoneId: string; jobId?: string; account: string }) {
  const isNew = jobId === undefined;
  useTitle(isNew ? 'New log job' : 'Log job');
  const jobsBase = `/zones/${seg(zoneId)}/logshipping`;
  const fields = useLoad(() => get<DatasetCatalog>(catalogPath(zoneId)), [zoneId]);
  // A new job at the zone's limit is refused by the API: say so before the form, not after it is filled.
  const existing = useLoad(() => (isNew ? get<Job[]>(`${jobsBase}/jobs`) : Promise.resolve(null)), [zoneId, isNew]);
  const job = useLoad(() => (isNew ? Promise.resolve(null) : get<Job>(`${jobsBase}/jobs/${seg(jobId)}`)), [zoneId, jobId]);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();
  const [tokenProblem, setTokenProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(new URLSearchParams(location.search).has('created') ? 'Log job created.' : null);

  // The form takes the job when it is first read (or another job is opened); the re-read after a
  // save here never overwrites what the user has typed since (the save sets the form itself).
  const formOf = useRef<string | null>(null);
  useEffect(() => {
    if (job.data === undefined) return;
    const key = job.data === null ? 'new' : String(job.data.id);
    if (formOf.current === key) return;
    formOf.current = key;
    setDraft(draftOf(job.data));
  }, [job.data]);

  const types: FieldTypes = {};
  for (const field of fields.data?.fields ?? []) types[field.name] = field.type;
  const unfilled = new Set((fields.data?.fields ?? []).filter((f) => !f.filled).map((f) => f.name));

  const header = (
    <>
      <p class="back-link">
        <Link href={`/zones/${seg(zoneId)}/jobs`}>← All log jobs</Link>
      </p>
    </>
  );
  if (job.error !== undefined || fields.error !== undefined || existing.error !== undefined) {
    return (
      <>
        {header}
        <h1>Log job</h1>
        <Errors error={job.error ?? fields.error ?? existing.error} />
      </>
    );
  }
  if (!draft || !fields.data || existing.data === undefined)
    return (
      <>
        {header}
        <h1>{isNew ? 'New log job' : 'Log job'}</h1>
        <Loading what="the log job" />
      </>
    );
  if (existing.data !== null && existing.data.length >= fields.data.max_jobs_per_zone) {
    return (
      <>
        {header}
        <h1>New log job</h1>
        <JobLimitNotice zoneId={zoneId} count={existing.data.length} max={fields.data.max_jobs_per_zone} />
      </>
    );
  }

  const set = (change: Partial<Draft>) => {
    setDraft({ ...draft, ...change });
    setSaved(null);
    if ('token' in change || 'destination' in change) setTokenProblem(null);
  };
  const original = job.data ?? null;
  const destinationChanged = original === null || draft.destination.trim() !== original.destination_conf;
  const showOwnership = needsOwnership(draft.destination) && destinationChanged;
  const rate = Number(draft.sampleRate);
  const rateProblem =
    draft.sampleRate.trim() === '' || !(rate > 0 && rate <= 1)
      ? 'A sample rate is a number above 0 and at most 1 (1 keeps every record, 0.1 one in ten).'
      : null;
  const nameProblem = NAME.test(draft.name) ? null : 'A job name may contain only letters, digits, hyphens and dots.';
  const destinationProblem =
    draft.destination.trim() === ''
      ? null
      : /^(file|store|s3|https?):\/\//i.test(draft.destination.trim())
        ? null
        : 'Start with file://, store://, s3://, https:// or http://.';

  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSaved(null);
    if (showOwnership && draft.token.trim() === '') {
      setTokenProblem(TOKEN_MISSING);
      return;
    }
    setTokenProblem(null);
    setSaving(true);
    const filter = draft.rawFilter ?? filterText(draft.filter, types);
    const body: Record<string, unknown> = {
      name: draft.name.trim() || null,
      destination_conf: draft.destination.trim(),
      dataset: 'http_requests',
      enabled: draft.enabled,
      output_options: {
        ...(original ? original.output_options : {}),
        field_names: draft.fields,
        sample_rate: Number(draft.sampleRate),
        timestamp_format: draft.timestampFormat,
      },
      filter,
      ...(showOwnership ? { ownership_challenge: draft.token.trim() } : {}),
    };
    try {
      if (original === null) {
        const created = (await call<Job>('POST', `${jobsBase}/jobs`, body)).result;
        navigate(`/zones/${seg(zoneId)}/jobs/${created.id}?created=1`, { replace: true });
      } else {
        setDraft(draftOf((await call<Job>('PUT', `${jobsBase}/jobs/${original.id}`, body)).result));
        setSaved('Log job saved. It applies from the next request on.');
        job.reload();
      }
    } catch (e) {
      const token = tokenRefusal(e);
      if (token !== null && showOwnership) setTokenProblem(token);
      else setError(e);
    } finally {
      setSaving(false);
    }
  };

  return (
    <>
      {header}
      <h1>{isNew ? 'New log job' : `Log job ${original?.name || original?.id}`}</h1>
      {original && <JobStatus path={`${jobsBase}/jobs/${original.id}`} />}
      {saved && <Success>{saved}</Success>}
      <form onSubmit={save} class="stack">
        <section class="panel" aria-labelledby="job-destination">
          <h2 id="job-destination">Where the lines go</h2>
          <div class="form-grid">
            <div class="field">
              <label for="job-name">Name</label>
              <input
                id="job-name"
                value={draft.name}
                placeholder="example-test"
                aria-describedby="job-name-help"
                aria-invalid={nameProblem ? true : undefined}
                onInput={(e) => set({ name: e.currentTarget.value })}
              />
              <p id="job-name-help" class={nameProblem ? 'field-problem' : 'help'}>
                {nameProblem ?? 'Letters, digits, hyphens and dots (optional).'}
              </p>
            </div>
            <div class="field field-wide">
              <label for="job-destination-conf">Destination</label>
              <input
                id="job-destination-conf"
                required
                value={draft.destination}
                placeholder={destinationExample(fields.data.file_roots)}
                spellcheck={false}
                aria-describedby="job-destination-help job-destination-roots"
                aria-invalid={destinationProblem ? true : undefined}
                onInput={(e) => set({ destination: e.currentTarget.value, token: '' })}
              />
              <p id="job-destination-help" class={destinationProblem ? 'field-problem' : 'help'}>
                {destinationProblem ?? (
                  <>
                    file:///dir, store://bucket/path, s3://bucket/path?region=…&amp;access-key-id=…&amp;secret-access-key=…, or https://host/path.{' '}
                    <code>{'{DATE}'}</code> becomes the day.
                  </>
                )}
              </p>
              <p id="job-destination-roots" class="help">
                {fields.data.file_roots.length === 0 ? (
                  'file:// destinations are turned off on this server.'
                ) : (
                  <>
                    A file:// directory must lie below {fields.data.file_roots.length === 1 ? "this server's file root" : "one of this server's file roots"}:{' '}
                    {fields.data.file_roots.map((root, i) => (
                      <span key={root}>
                        {i > 0 && ', '}
                        <code class="wrap">{root}</code>
                      </span>
                    ))}
                    .
                  </>
                )}
              </p>
            </div>
          </div>
          {showOwnership && (
            <>
              <h3>Prove the destination is yours</h3>
              <OwnershipStep
                zoneId={zoneId}
                account={account}
                destination={draft.destination}
                token={draft.token}
                onToken={(token) => set({ token })}
                problem={tokenProblem}
              />
            </>
          )}
        </section>

        <section class="panel" aria-labelledby="job-output">
          <h2 id="job-output">Lines</h2>
          <div class="form-grid">
            <div class="field">
              <label for="job-sample-rate">Sample rate</label>
              <input
                id="job-sample-rate"
                inputMode="decimal"
                value={draft.sampleRate}
                aria-describedby="job-sample-rate-help"
                aria-invalid={rateProblem ? true : undefined}
                onInput={(e) => set({ sampleRate: e.currentTarget.value })}
              />
              <p id="job-sample-rate-help" class={rateProblem ? 'field-problem' : 'help'}>
                {rateProblem ?? 'Share of matching records delivered (after the filter).'}
              </p>
            </div>
            <div class="field">
              <label for="job-timestamps">Timestamp format</label>
              <select id="job-timestamps" value={draft.timestampFormat} onChange={(e) => set({ timestampFormat: e.currentTarget.value })}>
                {TIMESTAMP_FORMATS.map((f) => (
                  <option key={f.value} value={f.value}>
                    {f.label}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <span class="label" id="job-enabled-label">
                Delivery
              </span>
              <label class="checkbox">
                <input id="job-enabled" type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} /> Enabled
              </label>
            </div>
          </div>
          <FieldPicker fields={fields.data.fields} selected={draft.fields} onChange={(selected) => set({ fields: selected })} />
        </section>

        <section class="panel" aria-labelledby="job-filter">
          <h2 id="job-filter">Filter</h2>
          {draft.rawFilter !== null ? (
            <div class="notice">
              <p>This job's filter has a shape the builder cannot show; it is kept as it is:</p>
              <pre tabIndex={0}>{draft.rawFilter}</pre>
              <button type="button" onClick={() => set({ rawFilter: null })}>
                Replace it with the builder
              </button>
            </div>
          ) : (
            <FilterBuilder root={draft.filter} types={types} unfilled={unfilled} onChange={(filter) => set({ filter })} />
          )}
        </section>

        <Errors error={error} title="The API refused this log job; nothing was saved" />
        <div class="form-actions">
          <button type="submit" class="button-primary" disabled={saving}>
            {saving ? 'Saving…' : isNew ? 'Create log job' : 'Save log job'}
          </button>
          <Link href={`/zones/${seg(zoneId)}/jobs`}>Cancel</Link>
        </div>
      </form>

      {original && (
        <section class="panel" aria-labelledby="job-lines">
          <h2 id="job-lines">Newest delivered lines</h2>
          <DeliveredLines zoneId={zoneId} jobId={String(original.id)} destination={original.destination_conf} />
        </section>
      )}
    </>
  );
}

/** Why no job can be added to this zone now, and what to do: shown before any form. */
export function JobLimitNotice({ zoneId, count, max, onJobsPage }: { zoneId: string; count: number; max: number; onJobsPage?: boolean }) {
  return (
    <div class="notice notice-warning" role="note" aria-labelledby="job-limit-title">
      <p class="notice-title" id="job-limit-title">
        This zone has {count} of {max} log jobs, the most a zone may have
      </p>
      <p>
        To add another, delete a job you no longer need{' '}
        {onJobsPage ? (
          'below'
        ) : (
          <>
            on <Link href={`/zones/${seg(zoneId)}/jobs`}>the zone's log jobs</Link>
          </>
        )}
        , or change an existing job's destination, fields or filter instead. A disabled job still counts.
      </p>
    </div>
  );
}

/** The job's status as the server sees it now, read again every few seconds (apart from the form, which it never resets). */
function JobStatus({ path }: { path: string }) {
  const status = useLoad(() => get<Job>(path), [path]);
  useEffect(() => {
    const timer = setInterval(status.reload, 3000);
    return () => clearInterval(timer);
  }, [status.reload]);
  const job = status.data;
  if (!job) return null;
  return (
    <dl class="facts" aria-label="Job status">
      <div>
        <dt>Status</dt>
        <dd>{job.enabled ? <span class="badge badge-ok">enabled</span> : <span class="badge">disabled</span>}</dd>
      </div>
      <div>
        <dt>Last delivery</dt>
        <dd>{formatDate(job.last_complete)}</dd>
      </div>
      <div>
        <dt>Last error</dt>
        <dd>{job.last_error ? `${formatDate(job.last_error)}: ${job.error_message ?? ''}` : 'none'}</dd>
      </div>
    </dl>
  );
}

/** The form's state for a job as the API gives it back, or for a new job (null). */
function draftOf(current: Job | null): Draft {
  if (current === null) {
    return {
      name: '',
      destination: '',
      token: '',
      enabled: true,
      fields: DEFAULT_FIELDS,
      sampleRate: '1',
      timestampFormat: 'rfc3339',
      filter: newGroup(),
      rawFilter: null,
    };
  }
  const parsed = parseFilterText(current.filter);
  return {
    name: current.name ?? '',
    destination: current.destination_conf,
    token: '',
    enabled: current.enabled,
    fields: current.output_options.field_names,
    sampleRate: String(current.output_options.sample_rate),
    timestampFormat: current.output_options.timestamp_format,
    filter: parsed ?? newGroup(),
    rawFilter: parsed ? null : current.filter,
  };
}

/** The destination field's example: a directory below the server's first file root, or a bucket when file:// is off. */
function destinationExample(fileRoots: readonly string[]): string {
  return fileRoots.length === 0 ? 'store://my-bucket/logs/{DATE}' : `file://${fileRoots[0]!.replace(/\/+$/, '')}/my-zone/{DATE}`;
}

/** Saving without a token: what to do, with the page's own buttons and fields. */
const TOKEN_MISSING =
  'Prove the destination is yours before saving: press "Write challenge file" (step 1), then paste the token it wrote into "Ownership token".';

/** The API's refusal of the ownership token (missing, or not this destination's), said in the page's terms; null for any other refusal. */
function tokenRefusal(error: unknown): string | null {
  if (!(error instanceof ApiFailure)) return null;
  const messages = error.errors.filter((e) => e.code === 1002).map((e) => e.message);
  if (messages.some((m) => m.startsWith('missing ownership challenge'))) return TOKEN_MISSING;
  if (messages.some((m) => m.startsWith('incorrect ownership challenge'))) {
    return 'This token does not prove the destination is yours: press "Write challenge file" (step 1) again, then paste the new token it wrote into "Ownership token".';
  }
  return null;
}
