/**
 * The frame of a zone's pages: the zone is read first (GET /zones/:id); then a breadcrumb back to
 * the zones, the zone's name and state, its sections, and the page. A zone that cannot be read (an
 * unknown or malformed id, another account's zone) gets the API's answer and a way back instead,
 * so no section waits on a zone that is not there.
 */
import type { ComponentChildren } from 'preact';
import { ApiFailure, get, seg } from '../api.ts';
import { Link } from '../router.tsx';
import { Errors, Loading, useLoad } from './common.tsx';

export interface Zone {
  id: string;
  name: string;
  origin: string | null;
  status: string;
  paused: boolean;
  created_on: string;
  modified_on: string;
}

export type ZoneSection = 'settings' | 'custom-fields' | 'jobs';

/** What the zone's state is, in one word: `paused` for a paused zone, else the API's status. */
export function zoneState(zone: Pick<Zone, 'status' | 'paused'>): string {
  return zone.paused ? 'paused' : zone.status;
}

export function ZoneStateBadge({ zone }: { zone: Pick<Zone, 'status' | 'paused'> }) {
  const state = zoneState(zone);
  return <span class={`badge ${state === 'active' ? 'badge-ok' : 'badge-warn'}`}>{state}</span>;
}

/** True for the API's "no such object" answer (404, or 400 for a malformed id; code 7003). */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiFailure && (error.status === 404 || error.status === 400) && error.errors.some((e) => e.code === 7003);
}

export function ZoneFrame({
  zoneId,
  section,
  children,
}: {
  zoneId: string;
  section: ZoneSection;
  /** The page, given the zone and a way to read it again (after a change). */
  children: (zone: Zone, reload: () => void) => ComponentChildren;
}) {
  const zone = useLoad(() => get<Zone>(`/zones/${seg(zoneId)}`), [zoneId]);
  const base = `/zones/${seg(zoneId)}`;
  const tabs = [
    { id: 'settings', href: base, label: 'Settings' },
    { id: 'custom-fields', href: `${base}/custom-fields`, label: 'Custom fields' },
    { id: 'jobs', href: `${base}/jobs`, label: 'Log jobs' },
  ] as const;
  const breadcrumb = (name: string, current?: Zone) => (
    <nav aria-label="Breadcrumb" class="breadcrumb">
      <ol>
        <li>
          <Link href="/zones">Zones</Link>
        </li>
        <li aria-current="page">
          {name}
          {current && (
            <>
              {' '}
              <ZoneStateBadge zone={current} />
            </>
          )}
        </li>
      </ol>
    </nav>
  );
  if (zone.data === undefined && zone.error !== undefined) {
    const missing = isNotFound(zone.error);
    return (
      <>
        {breadcrumb('Unknown zone')}
        <h1>{missing ? 'No such zone' : 'This zone could not be read'}</h1>
        <p class="lead">
          {missing ? (
            <>
              Your account has no zone with the id <code class="wrap">{zoneId}</code>: it may have been deleted, or the link is wrong.
            </>
          ) : (
            'The server did not answer with the zone.'
          )}
        </p>
        <Errors error={zone.error} title={zone.error instanceof ApiFailure ? `The API answered ${zone.error.status}` : 'The server could not be reached'} />
        <p>
          <Link href="/zones" class="button-link">
            ← Back to your zones
          </Link>
          {!missing && (
            <>
              {' '}
              <button type="button" onClick={zone.reload}>
                Try again
              </button>
            </>
          )}
        </p>
      </>
    );
  }
  if (zone.data === undefined)
    return (
      <>
        {breadcrumb('…')}
        <Loading what="the zone" />
      </>
    );
  return (
    <>
      {breadcrumb(zone.data.name, zone.data)}
      <nav aria-label="Zone sections">
        <ul class="tabs">
          {tabs.map((t) => (
            <li key={t.id}>
              <Link href={t.href} aria-current={t.id === section ? 'page' : undefined}>
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {children(zone.data, zone.reload)}
    </>
  );
}
