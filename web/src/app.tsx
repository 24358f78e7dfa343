/**
 * The dashboard's shell: finds out whether a session exists (GET /sessions/current, asked only
 * when this browser signed in and the session has not expired: session.ts says why), shows the
 * sign-in page when not, else the header with navigation and the page the path names.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call, get, setCsrfToken, whenSignedOut } from './api.ts';
import { Loading } from './components/common.tsx';
import { ZoneFrame } from './components/zone-frame.tsx';
import { AccessKeysPage } from './pages/access-keys-page.tsx';
import { BucketPage } from './pages/bucket-page.tsx';
import { BucketsPage } from './pages/buckets-page.tsx';
import { CustomFieldsPage } from './pages/custom-fields-page.tsx';
import { GatewayPage } from './pages/gateway-page.tsx';
import { JobEditorPage } from './pages/job-editor-page.tsx';
import { JobsPage } from './pages/jobs-page.tsx';
import { ScriptsPage } from './pages/scripts-page.tsx';
import { SignInPage } from './pages/sign-in-page.tsx';
import { TokensPage } from './pages/tokens-page.tsx';
import { ZoneSettingsPage } from './pages/zone-settings-page.tsx';
import { ZonesPage } from './pages/zones-page.tsx';
import { Link, match, navigate, useLocation, type Location } from './router.tsx';
import { forgetSession, mayBeSignedIn, noteSession, type Session } from './session.ts';

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const location = useLocation();
  useEffect(() => {
    whenSignedOut(() => {
      forgetSession();
      setCsrfToken(null);
      setSession(null);
    });
    if (!mayBeSignedIn()) {
      setSession(null);
      return;
    }
    get<Session>('/sessions/current').then(
      (s) => {
        noteSession(s);
        setCsrfToken(s.csrf_token);
        setSession(s);
      },
      () => setSession(null),
    );
  }, []);

  if (session === undefined)
    return (
      <main id="main" class="page">
        <Loading what="the dashboard" />
      </main>
    );
  if (session === null) {
    return (
      <SignInPage
        onSignedIn={(s) => {
          noteSession(s);
          setCsrfToken(s.csrf_token);
          setSession(s);
          const next = location.query.get('next');
          navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/zones', { replace: true });
        }}
      />
    );
  }
  const signOut = async () => {
    try {
      await call('DELETE', '/sessions/current');
    } finally {
      forgetSession();
      setCsrfToken(null);
      setSession(null);
      navigate('/sign-in', { replace: true });
    }
  };
  return (
    <Shell session={session} path={location.path} onSignOut={signOut}>
      {page(location, session)}
    </Shell>
  );
}

function page(location: Location, session: Session) {
  const { path, query } = location;
  if (path === '/' || path === '/sign-in') return <Redirect to="/zones" />;
  const account = session.account.id;
  let params: Record<string, string> | null;
  if (match('/zones', path)) return <ZonesPage account={account} />;
  if ((params = match('/zones/:zone', path))) {
    return (
      <ZoneFrame zoneId={params.zone!} section="settings">
        {(zone, reload) => <ZoneSettingsPage zone={zone} onChanged={reload} />}
      </ZoneFrame>
    );
  }
  if ((params = match('/zones/:zone/custom-fields', path))) {
    return (
      <ZoneFrame zoneId={params.zone!} section="custom-fields">
        {(zone) => <CustomFieldsPage zoneId={zone.id} />}
      </ZoneFrame>
    );
  }
  if ((params = match('/zones/:zone/jobs', path)))
    return (
      <ZoneFrame zoneId={params.zone!} section="jobs">
        {(zone) => <JobsPage zoneId={zone.id} />}
      </ZoneFrame>
    );
  if ((params = match('/zones/:zone/jobs/new', path))) {
    return (
      <ZoneFrame zoneId={params.zone!} section="jobs">
        {(zone) => <JobEditorPage key="new" zoneId={zone.id} account={account} />}
      </ZoneFrame>
    );
  }
  if ((params = match('/zones/:zone/jobs/:job', path))) {
    return (
      <ZoneFrame zoneId={params.zone!} section="jobs">
        {(zone) => <JobEditorPage key={path} zoneId={zone.id} jobId={params!.job!} account={account} />}
      </ZoneFrame>
    );
  }
  if (match('/access-keys', path)) return <AccessKeysPage account={account} />;
  if (match('/tokens', path)) return <TokensPage account={account} />;
  if (match('/buckets', path)) return <BucketsPage account={account} />;
  if ((params = match('/buckets/:bucket', path))) return <BucketPage account={account} bucket={params.bucket!} prefix={query.get('prefix') ?? ''} />;
  if (match('/scripts', path)) return <ScriptsPage session={session} />;
  if (match('/gateway', path)) return <GatewayPage account={account} />;
  return (
    <>
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. Go to <Link href="/zones">your zones</Link>.
      </p>
    </>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

const SECTIONS = [
  { href: '/zones', label: 'Zones' },
  { href: '/buckets', label: 'Buckets' },
  { href: '/scripts', label: 'Scripts' },
  { href: '/access-keys', label: 'S3 keys' },
  { href: '/tokens', label: 'API tokens' },
  { href: '/gateway', label: 'Gateway' },
];

function Shell({ session, path, onSignOut, children }: { session: Session; path: string; onSignOut: () => void; children: ComponentChildren }) {
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="site-header">
        <div class="site-header-inner">
          <Link href="/zones" class="brand">
            edgeport
          </Link>
          <nav aria-label="Sections">
            <ul class="site-nav">
              {SECTIONS.map((s) => {
                const here = path === s.href || path.startsWith(`${s.href}/`);
                return (
                  <li key={s.href}>
                    <Link href={s.href} aria-current={here ? 'page' : undefined}>
                      {s.label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
          <div class="account">
            {session.operator ? (
              <span
                class="account-email"
                title={`Account ${session.account.id}: the operator, whose e-mail and key EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY set`}
              >
                operator: {session.email}
              </span>
            ) : (
              <span class="account-email" title={`Account ${session.account.id}`}>
                {session.email}
              </span>
            )}
            <button type="button" class="button-on-dark" onClick={onSignOut}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
