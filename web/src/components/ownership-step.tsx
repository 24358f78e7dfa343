/**
 * The ownership challenge of a file:// or store:// destination, step by step: the server writes a
 * token into `ownership-challenge.txt` at the destination (POST .../ownership); whoever can read
 * that place pastes it here (for store:// the page can read it from the bucket); the token can be
 * checked before the job is saved (POST .../ownership/validate).
 */
import { useState } from 'preact/hooks';
import { ApiFailure, API, call, seg } from '../api.ts';
import { Errors } from './common.tsx';

export function needsOwnership(destination: string): boolean {
  return /^(file|store):\/\//i.test(destination.trim());
}

export function OwnershipStep({
  zoneId,
  account,
  destination,
  token,
  onToken,
  problem,
}: {
  zoneId: string;
  account: string;
  destination: string;
  token: string;
  onToken: (token: string) => void;
  /** Why the job could not be saved with this token (missing, or not this destination's), in the page's terms. */
  problem?: string | null;
}) {
  const [written, setWritten] = useState<{ filename: string | null; message: string; valid: boolean } | null>(null);
  const [checked, setChecked] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const base = `/zones/${seg(zoneId)}/logshipping/ownership`;
  const isStore = /^store:\/\//i.test(destination.trim());

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const write = () =>
    run(async () => {
      setChecked(null);
      setWritten((await call<{ filename: string | null; message: string; valid: boolean }>('POST', base, { destination_conf: destination.trim() })).result);
    });
  const readFromBucket = () =>
    run(async () => {
      const filename = written?.filename ?? '';
      const slash = filename.indexOf('/');
      const response = await fetch(`${API}/accounts/${seg(account)}/store/buckets/${seg(filename.slice(0, slash))}/objects/${seg(filename.slice(slash + 1))}`, {
        credentials: 'same-origin',
      });
      if (!response.ok) throw new ApiFailure(response.status, ((await response.json()) as { errors: ApiFailure['errors'] }).errors);
      onToken((await response.text()).trim());
    });
  const check = () =>
    run(async () => {
      setChecked(
        (await call<{ valid: boolean }>('POST', `${base}/validate`, { destination_conf: destination.trim(), ownership_challenge: token.trim() })).result.valid,
      );
    });

  return (
    <div class="ownership">
      <ol class="steps">
        <li>
          <p>
            <strong>Write a challenge file.</strong> The server writes <code>ownership-challenge.txt</code>, holding a token valid for 7 days, where this
            destination's files go.
          </p>
          <button type="button" disabled={busy || destination.trim() === ''} onClick={write}>
            Write challenge file
          </button>
          {written &&
            (written.valid ? (
              <p class="notice notice-success" role="status">
                Written to <code>{written.filename}</code>.
              </p>
            ) : (
              <p class="notice notice-error" role="alert">
                The file could not be written: {written.message}
              </p>
            ))}
        </li>
        <li>
          <p>
            <strong>Paste its token.</strong>{' '}
            {isStore
              ? "The file is an object in this server's store: the page can read it for you."
              : "Open the file on the server's machine (for example with cat) and paste what it holds."}
          </p>
          {isStore && written?.valid && (
            <button type="button" disabled={busy} onClick={readFromBucket}>
              Read the token from the bucket
            </button>
          )}
          <div class="field">
            <label for="ownership-token">Ownership token</label>
            <input
              id="ownership-token"
              value={token}
              autoComplete="off"
              spellcheck={false}
              aria-invalid={problem ? true : undefined}
              aria-describedby={problem ? 'ownership-token-problem' : undefined}
              onInput={(e) => {
                setChecked(null);
                onToken(e.currentTarget.value);
              }}
            />
            {problem && (
              <p id="ownership-token-problem" class="field-problem" role="alert">
                {problem}
              </p>
            )}
          </div>
        </li>
        <li>
          <p>
            <strong>Check it</strong> (optional: saving the job checks it too).
          </p>
          <button type="button" disabled={busy || token.trim() === ''} onClick={check}>
            Check token
          </button>
          {checked === true && (
            <p class="notice notice-success" role="status">
              The token proves this destination is yours.
            </p>
          )}
          {checked === false && (
            <p class="notice notice-error" role="alert">
              This token does not match the destination: write a new challenge file and paste its token.
            </p>
          )}
        </li>
      </ol>
      <Errors error={error} />
    </div>
  );
}
