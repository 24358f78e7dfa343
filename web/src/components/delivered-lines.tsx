/** The newest lines a job delivered, read back from its destination, refreshed while the page is open. */
import { useEffect, useState } from 'preact/hooks';
import { get, seg } from '../api.ts';
import { Errors, formatDate, useLoad } from './common.tsx';

interface Delivered {
  batch: string | null;
  delivered_on: string | null;
  lines: string[];
}

const REFRESH_MS = 3000;

export function DeliveredLines({ zoneId, jobId, destination }: { zoneId: string; jobId: string; destination: string }) {
  const [live, setLive] = useState(true);
  const readable = /^(file|store):\/\//i.test(destination);
  const delivered = useLoad(
    () => (readable ? get<Delivered>(`/zones/${seg(zoneId)}/logshipping/jobs/${seg(jobId)}/delivered?lines=20`) : Promise.resolve(null)),
    [zoneId, jobId, readable],
  );
  useEffect(() => {
    if (!live || !readable) return;
    const timer = setInterval(delivered.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, readable, delivered.reload]);

  if (!readable)
    return <p class="muted">Lines delivered to {destination.split(':')[0]}:// destinations cannot be read back here; look at the destination itself.</p>;
  const data = delivered.data;
  return (
    <div class="delivered">
      <div class="delivered-head">
        <label class="checkbox">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Refresh every {REFRESH_MS / 1000} seconds
        </label>
        <button type="button" onClick={delivered.reload}>
          Refresh now
        </button>
      </div>
      {delivered.error !== undefined && <Errors error={delivered.error} title="The delivered lines could not be read" />}
      {data &&
        (data.batch === null ? (
          <p class="muted" role="status">
            Nothing delivered yet. Batches are written within the job's batch interval after matching requests reach the edge.
          </p>
        ) : (
          <>
            <p class="small">
              Newest batch <code class="wrap">{data.batch}</code>, written {formatDate(data.delivered_on)};{' '}
              {data.lines.length === 1 ? 'its last line' : `its last ${data.lines.length} lines`}:
            </p>
            <pre class="log-lines" tabIndex={0} aria-label="Delivered log lines">
              {data.lines.join('\n')}
            </pre>
          </>
        ))}
    </div>
  );
}
