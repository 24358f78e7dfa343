/**
 * What the account stores against its quotas (`GET /accounts/<id>/usage`): its objects' bytes
 * (open uploads' parts included) and count, its scripts' bytes, each with a bar where it has a
 * limit, and how many versions a script keeps.
 */
import { get, seg } from '../api.ts';
import { Errors, formatBytes, useLoad } from './common.tsx';

interface Usage {
  objects: { stored_bytes: number; max_bytes: number | null; count: number; max_count: number | null };
  scripts: { stored_bytes: number; max_bytes: number | null; max_versions_per_script: number };
}

const count = (n: number) => n.toLocaleString('en-US');

function QuotaRow({ id, label, used, max, format }: { id: string; label: string; used: number; max: number | null; format: (n: number) => string }) {
  const percent = max === null || max === 0 ? 0 : Math.min(100, Math.round((used / max) * 100));
  return (
    <div class="quota-row">
      <dt id={id}>{label}</dt>
      <dd>
        <span>{max === null ? `${format(used)}, no limit` : `${format(used)} of ${format(max)} (${percent}%)`}</span>
        {max !== null && <progress max={max} value={Math.min(used, max)} aria-labelledby={id} aria-valuetext={`${percent}%`} />}
      </dd>
    </div>
  );
}

export function UsagePanel({ account }: { account: string }) {
  const usage = useLoad(() => get<Usage>(`/accounts/${seg(account)}/usage`), [account]);
  const data = usage.data;
  return (
    <section class="panel" aria-labelledby="usage-title">
      <h2 id="usage-title">Storage quota</h2>
      {usage.error !== undefined && <Errors error={usage.error} title="The account's usage could not be read" />}
      {data && (
        <>
          <dl class="quotas">
            <QuotaRow id="quota-object-bytes" label="Object bytes" used={data.objects.stored_bytes} max={data.objects.max_bytes} format={formatBytes} />
            <QuotaRow id="quota-objects" label="Objects" used={data.objects.count} max={data.objects.max_count} format={count} />
            <QuotaRow id="quota-script-bytes" label="Script bytes" used={data.scripts.stored_bytes} max={data.scripts.max_bytes} format={formatBytes} />
          </dl>
          <p class="help">
            Object bytes count unfinished multipart uploads too. A write past a quota is refused; each script keeps its {data.scripts.max_versions_per_script}{' '}
            newest versions and the deployed one. The operator sets the quotas.
          </p>
        </>
      )}
    </section>
  );
}
