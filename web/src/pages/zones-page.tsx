/**
 * Zones: the account's zones (GET /zones) with their state, a form to add one (name and origin), and
 * deletes. What adding a zone answers (a name taken, an origin refused) is said at the form, beside
 * the fields it is about; what a delete answers, above the list.
 */
import { useState } from 'preact/hooks';
import { ApiFailure, call, seg } from '../api.ts';
import { ConfirmButton, Errors, formatDate, ListTable, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { ZoneStateBadge, type Zone } from '../components/zone-frame.tsx';
import { Link } from '../router.tsx';

async function allZones(): Promise<Zone[]> {
  const zones: Zone[] = [];
  for (let page = 1; page <= 100; page++) {
    const envelope = await call<Zone[]>('GET', `/zones?per_page=50&page=${page}`);
    zones.push(...envelope.result);
    if (envelope.result.length < 50) break;
  }
  return zones;
}

export function ZonesPage({ account }: { account: string }) {
  useTitle('Zones');
  const zones = useLoad(allZones, []);
  const [name, setName] = useState('');
  const [origin, setOrigin] = useState('');
  const action = useAction();
  const adding = useAction();

  const create = (event: Event) => {
    event.preventDefault();
    void adding.run(async () => {
      const zone = (await call<Zone>('POST', '/zones', { name: name.trim(), account: { id: account }, ...(origin.trim() ? { origin: origin.trim() } : {}) }))
        .result;
      setName('');
      setOrigin('');
      zones.reload();
      return `Zone ${zone.name} created.`;
    });
  };
  const remove = (zone: Zone) =>
    action.run(async () => {
      await call('DELETE', `/zones/${seg(zone.id)}`);
      zones.reload();
      return `Zone ${zone.name} deleted, with its custom fields and log jobs.`;
    });

  return (
    <>
      <h1>Zones</h1>
      <p class="lead">A zone is a host name the edge serves: its requests go to the zone's origin, and every request becomes a log record.</p>
      <Errors error={action.error} />
      {action.done && <Success>{action.done}</Success>}
      <section aria-labelledby="zones-list">
        <h2 id="zones-list">Your zones</h2>
        <ListTable
          list={zones}
          what="zones"
          failed="The zones could not be read"
          empty="No zones yet: add one below."
          head={
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Origin</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          }
          row={(zone) => (
            <tr key={zone.id}>
              <th scope="row">
                <Link href={`/zones/${seg(zone.id)}`}>{zone.name}</Link>
              </th>
              <td data-label="Origin">{zone.origin ? <code class="wrap">{zone.origin}</code> : <span class="muted">none</span>}</td>
              <td data-label="State">
                <ZoneStateBadge zone={zone} />
              </td>
              <td data-label="Created">{formatDate(zone.created_on)}</td>
              <td class="actions">
                <Link href={`/zones/${seg(zone.id)}`}>Settings</Link>
                <Link href={`/zones/${seg(zone.id)}/custom-fields`}>Custom fields</Link>
                <Link href={`/zones/${seg(zone.id)}/jobs`}>Log jobs</Link>
                <ConfirmButton label="Delete" confirmLabel={`Delete ${zone.name}`} onConfirm={() => remove(zone)} />
              </td>
            </tr>
          )}
        />
      </section>
      <section aria-labelledby="zone-create" class="panel">
        <h2 id="zone-create">Add a zone</h2>
        <Errors error={adding.error} title="The zone was not added" />
        {adding.done && <Success>{adding.done}</Success>}
        <form onSubmit={create} class="form-grid">
          <div class="field">
            <label for="zone-name">Name</label>
            <input
              id="zone-name"
              required
              value={name}
              placeholder="example.test"
              aria-describedby="zone-name-help"
              aria-invalid={refusedAt(adding.error, '/name', [ZONE_EXISTS])}
              onInput={(e) => setName(e.currentTarget.value)}
            />
            <p id="zone-name-help" class="help">
              The host name; sub-domains are served by it too.
            </p>
          </div>
          <div class="field">
            <label for="zone-origin">Origin</label>
            <input
              id="zone-origin"
              type="url"
              value={origin}
              placeholder="http://127.0.0.1:3000"
              aria-describedby="zone-origin-help"
              aria-invalid={refusedAt(adding.error, '/origin')}
              onInput={(e) => setOrigin(e.currentTarget.value)}
            />
            <p id="zone-origin-help" class="help">
              Where the edge sends the zone's requests (optional).
            </p>
          </div>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={adding.busy}>
              Add zone
            </button>
          </div>
        </form>
      </section>
    </>
  );
}

/** The API's code for a zone name some zone already has. */
const ZONE_EXISTS = 1061;

/** true when the API's refusal points at `pointer` (a field of the body) or has one of `codes` (about that field), for aria-invalid. */
function refusedAt(error: unknown, pointer: string, codes: readonly number[] = []): true | undefined {
  return error instanceof ApiFailure && error.errors.some((e) => e.source?.pointer === pointer || codes.includes(e.code)) ? true : undefined;
}
