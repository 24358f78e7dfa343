/**
 * Sign-in with the account's e-mail and API key (POST /sessions); a wrong key gets a plain answer,
 * in the words of this form (e-mail, API key), not the API's header names.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call } from '../api.ts';
import { useTitle } from '../components/common.tsx';
import { navigate } from '../router.tsx';
import type { Session } from '../session.ts';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  useTitle('Sign in');
  const [email, setEmail] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<{ headline: string; details: string[] } | null>(null);

  useEffect(() => {
    if (location.pathname !== '/sign-in') {
      const next = location.pathname + location.search;
      navigate(`/sign-in${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}`, { replace: true });
    }
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      const session = (await call<Session>('POST', '/sessions', { email: email.trim(), key: key.trim() })).result;
      onSignedIn(session);
    } catch (error) {
      const wrong = error instanceof ApiFailure && error.errors.some((e) => e.code === 9103);
      // The API speaks of its headers; this form asks for an e-mail and an API key.
      const details = wrong ? [] : error instanceof ApiFailure ? error.errors.map((e) => inFormTerms(e.message)) : [String(error)];
      setProblem({
        headline: wrong ? 'That e-mail and API key do not match an account. Check both and try again.' : 'Signing in did not work.',
        details,
      });
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <div class="sign-in-card">
        <p class="brand brand-large">edgeport</p>
        <h1>Sign in</h1>
        <p class="muted">
          Use your account's e-mail and API key: the same pair as <code>X-Auth-Email</code> and <code>X-Auth-Key</code>. The first start of{' '}
          <code>edgeport start</code> prints them.
        </p>
        {problem && (
          <div class="notice notice-error" role="alert">
            <p class="notice-title">{problem.headline}</p>
            {problem.details.length > 0 && (
              <ul>
                {problem.details.map((d, i) => (
                  <li key={i}>{d}</li>
                ))}
              </ul>
            )}
          </div>
        )}
        <form onSubmit={submit} class="stack">
          <div class="field">
            <label for="email">E-mail</label>
            <input id="email" name="email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="key">API key</label>
            <input id="key" name="key" type="password" autoComplete="current-password" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          </div>
          <button type="submit" class="button-primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p class="muted small">Sessions last 12 hours, or until you sign out.</p>
      </div>
    </main>
  );
}

/** An API message about credentials in the words of the sign-in form. */
function inFormTerms(message: string): string {
  return message.replace(/X-Auth-Email/g, 'e-mail').replace(/X-Auth-Key/g, 'API key');
}
