/**
 * A zone's settings: its origin (set, changed or removed with PATCH /zones/:id `origin`) and
 * whether it is paused (PATCH `paused`), with its state, creation and last change.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, seg } from '../api.ts';
import { Errors, formatDate, Success, useAction, useTitle } from '../components/common.tsx';
import { ZoneStateBadge, type Zone } from '../components/zone-frame.tsx';

export function ZoneSettingsPage({ zone, onChanged }: { zone: Zone; onChanged: () => void }) {
  useTitle(`${zone.name} settings`);
  const [origin, setOrigin] = useState(zone.origin ?? '');
  // The origin the form last took from the server: the form follows the zone only when the
  // zone's origin moves away from it (another zone, a change made elsewhere), so the re-read
  // that follows a save here never overwrites what the user has typed since.
  const synced = useRef({ id: zone.id, origin: zone.origin ?? '' });
  const action = useAction();
  useEffect(() => {
    const now = { id: zone.id, origin: zone.origin ?? '' };
    if (now.id === synced.current.id && now.origin === synced.current.origin) return;
    synced.current = now;
    setOrigin(now.origin);
  }, [zone.id, zone.origin]);
  const typed = origin.trim();
  const unchanged = typed === synced.current.origin;

  const patch = (body: { origin?: string | null; paused?: boolean }, done: string) =>
    action.run(async () => {
      const updated = (await call<Zone>('PATCH', `/zones/${seg(zone.id)}`, body)).result;
      synced.current = { id: updated.id, origin: updated.origin ?? '' };
      onChanged();
      return done;
    });
  const saveOrigin = (event: Event) => {
    event.preventDefault();
    void patch({ origin: typed === '' ? null : typed }, typed === '' ? 'Origin removed.' : `Origin set to ${typed}.`);
  };

  return (
    <>
      <h1>Zone settings</h1>
      <dl class="facts" aria-label="Zone">
        <div>
          <dt>Name</dt>
          <dd>{zone.name}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>
            <ZoneStateBadge zone={zone} />
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDate(zone.created_on)}</dd>
        </div>
        <div>
          <dt>Changed</dt>
          <dd>{formatDate(zone.modified_on)}</dd>
        </div>
      </dl>
      <Errors error={action.error} title="The API refused this change; nothing was changed" />
      {action.done && <Success>{action.done}</Success>}
      <section class="panel" aria-labelledby="origin-title">
        <h2 id="origin-title">Origin</h2>
        <form onSubmit={saveOrigin} class="form-grid">
          <div class="field field-wide">
            <label for="zone-origin-edit">Origin URL</label>
            <input
              id="zone-origin-edit"
              type="url"
              value={origin}
              placeholder="http://127.0.0.1:3000"
              spellcheck={false}
              aria-describedby="zone-origin-edit-help"
              onInput={(e) => setOrigin(e.currentTarget.value)}
            />
            <p id="zone-origin-edit-help" class="help">
              Where the edge sends this zone's requests (http:// or https://, no query).{' '}
              {zone.origin ? (
                <>
                  Now <code class="wrap">{zone.origin}</code>; leave empty to remove it.
                </>
              ) : (
                'The zone has none yet: the edge has nowhere to send its requests.'
              )}
            </p>
          </div>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={action.busy || unchanged}>
              {typed === '' && zone.origin ? 'Remove origin' : 'Save origin'}
            </button>
          </div>
        </form>
      </section>
      <section class="panel" aria-labelledby="pause-title">
        <h2 id="pause-title">{zone.paused ? 'Paused' : 'Pause'}</h2>
        <p>
          {zone.paused
            ? "This zone is paused (edgeport's edge still serves it). Resume it to make it active again."
            : "Pausing marks the zone paused, as the API's paused flag; edgeport's edge keeps serving a paused zone (there is no other network to hand its traffic to)."}
        </p>
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void patch({ paused: !zone.paused }, zone.paused ? 'Zone resumed: it is active.' : 'Zone paused.')}
        >
          {zone.paused ? 'Resume zone' : 'Pause zone'}
        </button>
      </section>
    </>
  );
}
