/** Log jobs of a zone: each job's destination and status (enabled, last delivery, last error). */
import { call, get, seg } from '../api.ts';
import { ConfirmButton, Errors, formatDate, ListTable, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { catalogPath, type DatasetCatalog, type Job } from '../jobs.ts';
import { JobLimitNotice } from './job-editor-page.tsx';
import { Link } from '../router.tsx';

export function JobsPage({ zoneId }: { zoneId: string }) {
  useTitle('Log jobs');
  const jobs = useLoad(() => get<Job[]>(`/zones/${seg(zoneId)}/logshipping/jobs`), [zoneId]);
  const catalog = useLoad(() => get<DatasetCatalog>(catalogPath(zoneId)), [zoneId]);
  const action = useAction();
  const base = `/zones/${seg(zoneId)}/jobs`;
  const max = catalog.data?.max_jobs_per_zone;
  const atLimit = jobs.data !== undefined && max !== undefined && jobs.data.length >= max;

  const remove = (job: Job) =>
    action.run(async () => {
      await call('DELETE', `/zones/${seg(zoneId)}/logshipping/jobs/${job.id}`);
      jobs.reload();
      return `Log job ${job.name ?? job.id} deleted.`;
    });

  return (
    <>
      <div class="title-row">
        <h1>Log jobs</h1>
        {atLimit ? (
          <button type="button" class="button-primary" disabled aria-describedby="job-limit-title">
            New log job
          </button>
        ) : (
          <Link href={`${base}/new`} class="button-link button-primary">
            New log job
          </Link>
        )}
      </div>
      <p class="lead">
        Each job filters the zone's <code>http_requests</code> records, keeps the fields it names, and delivers gzipped batches to its destination.
        {max !== undefined && jobs.data !== undefined && (
          <>
            {' '}
            This zone has{' '}
            <strong>
              {jobs.data.length} of {max}
            </strong>{' '}
            jobs.
          </>
        )}
      </p>
      {atLimit && <JobLimitNotice zoneId={zoneId} count={jobs.data!.length} max={max!} onJobsPage />}
      <Errors error={action.error} />
      {action.done && <Success>{action.done}</Success>}
      <ListTable
        list={jobs}
        what="log jobs"
        failed="The log jobs could not be read"
        empty="No log jobs yet."
        head={
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Destination</th>
            <th scope="col">Enabled</th>
            <th scope="col">Last delivery</th>
            <th scope="col">Last error</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        }
        row={(job) => (
          <tr key={job.id}>
            <th scope="row">
              <Link href={`${base}/${job.id}`}>{job.name || `Job ${job.id}`}</Link>
            </th>
            <td data-label="Destination">
              <code class="wrap">{job.destination_conf}</code>
            </td>
            <td data-label="Enabled">{job.enabled ? <span class="badge badge-ok">enabled</span> : <span class="badge">disabled</span>}</td>
            <td data-label="Last delivery">{formatDate(job.last_complete)}</td>
            <td data-label="Last error">
              {job.last_error ? (
                <>
                  <span class="badge badge-bad">{formatDate(job.last_error)}</span>
                  {job.error_message && <p class="small">{job.error_message}</p>}
                </>
              ) : (
                <span class="muted">none</span>
              )}
            </td>
            <td class="actions">
              <Link href={`${base}/${job.id}`}>Edit</Link>
              <ConfirmButton label="Delete" confirmLabel={`Delete ${job.name || `job ${job.id}`}`} onConfirm={() => remove(job)} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
