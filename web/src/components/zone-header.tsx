/** The top of a zone's pages: a breadcrumb back to the zones, the zone's name, and its sections. */
import { get, seg } from '../api.ts';
import { Link } from '../router.tsx';
import { Errors, useLoad } from './common.tsx';

export interface Zone {
  id: string;
  name: string;
  origin: string | null;
  status: string;
  created_on: string;
}

export function ZoneHeader({ zoneId, section }: { zoneId: string; section: 'custom-fields' | 'jobs' }) {
  const zone = useLoad(() => get<Zone>(`/zones/${seg(zoneId)}`), [zoneId]);
  const tabs = [
    { id: 'custom-fields', href: `/zones/${seg(zoneId)}/custom-fields`, label: 'Custom fields' },
    { id: 'jobs', href: `/zones/${seg(zoneId)}/jobs`, label: 'Log jobs' },
  ] as const;
  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <ol>
          <li><Link href="/zones">Zones</Link></li>
          <li aria-current="page">{zone.data?.name ?? '…'}</li>
        </ol>
      </nav>
      <Errors error={zone.error} title="This zone could not be read" />
      <nav aria-label="Zone sections">
        <ul class="tabs">
          {tabs.map((t) => <li key={t.id}><Link href={t.href} aria-current={t.id === section ? 'page' : undefined}>{t.label}</Link></li>)}
        </ul>
      </nav>
    </>
  );
}
