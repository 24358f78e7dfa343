/**
 * The signed-in session as the API answers it (POST /sessions, GET /sessions/current), and the
 * page's note that one may exist.
 *
 * Why a note: the session cookie is httpOnly, so the page cannot see whether it holds one, and
 * asking GET /sessions/current without one is answered 401 (as it must be), which browsers log as
 * a console error on every visit of a signed-out user. So the page asks only when it signed in
 * itself (in this browser, any tab) and the session has not expired by its own `expires_on`: the
 * note holds that time, set on sign-in, removed on sign-out and on any 401 / 10000. The note is no
 * credential (the API never reads it); a note that outlives its session costs one 401, then goes.
 */
export interface Session {
  account: { id: string; name: string };
  email: string;
  /** Whether this account is the operator (the one EDGEPORT_ADMIN_EMAIL / KEY sign in). */
  operator: boolean;
  csrf_token: string;
  created_on: string;
  expires_on: string;
}

const NOTE = 'edgeport.session-expires-on';

/** Remembers that this browser signed in, until `expiresOn`. */
export function noteSession(session: Pick<Session, 'expires_on'>): void {
  try {
    localStorage.setItem(NOTE, session.expires_on);
  } catch {
    // Storage refused (private mode, quota): the page asks the API on each load instead.
  }
}

export function forgetSession(): void {
  try {
    localStorage.removeItem(NOTE);
  } catch {
    // Nothing to forget.
  }
}

/** Whether a session may exist: worth asking GET /sessions/current. */
export function mayBeSignedIn(now = Date.now()): boolean {
  let note: string | null;
  try {
    note = localStorage.getItem(NOTE);
  } catch {
    return true;
  }
  if (note === null) return false;
  const until = Date.parse(note);
  if (Number.isNaN(until) || until <= now) {
    forgetSession();
    return false;
  }
  return true;
}
