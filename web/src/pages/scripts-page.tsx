/**
 * The account's deployed scripts (the Workers API under /accounts/:id/workers): each script with
 * the version it serves (number, id, when, message), its routes, that version's bindings, a live
 * tail of the requests it serves (components/script-tail.tsx), its earlier versions and
 * deployments, and delete. With no script yet, how to deploy one with
 * wrangler pointed at this server.
 */
import { call, get, seg } from '../api.ts';
import { ConfirmButton, Errors, formatDate, Loading, Success, useAction, useLoad, useTitle } from '../components/common.tsx';
import { ScriptTail } from '../components/script-tail.tsx';
import type { Session } from '../session.ts';

interface Script {
  id: string;
  created_on: string;
  modified_on: string;
  compatibility_date: string | null;
  /** The serving version's id (the platform's name for it). */
  deployment_id: string | null;
}

interface Binding {
  type: string;
  name: string;
  bucket_name?: string;
  text?: string;
  json?: unknown;
}

interface Version {
  id: string;
  number: number;
  metadata: { created_on: string };
  annotations: Record<string, string>;
  resources: { bindings: Binding[]; script_runtime: { compatibility_date: string | null; compatibility_flags: string[] } };
}

interface Deployment {
  id: string;
  created_on: string;
  versions: Array<{ version_id: string; percentage: number }>;
  annotations: Record<string, string>;
}

interface Route {
  id: string;
  pattern: string;
  script: string | null;
}

export function ScriptsPage({ session }: { session: Session }) {
  useTitle('Scripts');
  const account = session.account.id;
  const base = `/accounts/${seg(account)}/workers/scripts`;
  const scripts = useLoad(() => get<Script[]>(base), [account]);
  const action = useAction();
  const remove = (name: string) =>
    action.run(async () => {
      await call('DELETE', `${base}/${seg(name)}`);
      scripts.reload();
      return `Script ${name} deleted, with its versions, deployments, secrets and routes.`;
    });

  return (
    <>
      <h1>Scripts</h1>
      <p class="lead">
        The scripts your account deployed (with <code>wrangler deploy</code> or the API): the version each serves, where it runs, and what it is bound to.
      </p>
      <Errors error={action.error} />
      {action.done && <Success>{action.done}</Success>}
      {scripts.error !== undefined && <Errors error={scripts.error} title="The scripts could not be read" />}
      {scripts.data === undefined ? (
        scripts.error === undefined && <Loading what="scripts" />
      ) : scripts.data.length === 0 ? (
        <HowToDeploy email={session.email} />
      ) : (
        scripts.data.map((script) => <ScriptCard key={`${script.id}:${script.modified_on}`} base={base} script={script} onDelete={() => remove(script.id)} />)
      )}
    </>
  );
}

function HowToDeploy({ email }: { email: string }) {
  const api = `${location.origin}/client/v4`;
  return (
    <section class="panel" aria-labelledby="deploy-title">
      <h2 id="deploy-title">No scripts yet</h2>
      <p>
        Deploy one with wrangler (4 or later) pointed at this server: in the folder of your <code>wrangler.json</code> (or <code>wrangler.toml</code>), run
      </p>
      <pre tabIndex={0}>{`export CLOUDFLARE_API_BASE_URL=${api}
export CLOUDFLARE_EMAIL=${email} CLOUDFLARE_API_KEY=<your API key>
npx wrangler deploy`}</pre>
      <p class="help">
        Or use an API token with Workers Scripts Write as <code>CLOUDFLARE_API_TOKEN</code>. Routes in the config must be on zones of your account. The script
        shows up here once it is deployed; the Workers section of the management API guide (<code>docs/management-api.md</code>) has the details.
      </p>
    </section>
  );
}

function ScriptCard({ base, script, onDelete }: { base: string; script: Script; onDelete: () => Promise<void> }) {
  const path = `${base}/${seg(script.id)}`;
  const details = useLoad(async () => {
    const [routes, versions, deployments] = await Promise.all([
      get<Route[]>(`${path}/routes`),
      get<{ items: Version[] }>(`${path}/versions`),
      get<{ deployments: Deployment[] }>(`${path}/deployments`),
    ]);
    return { routes, versions: versions.items, deployments: deployments.deployments };
  }, [path, script.modified_on]);
  const current = details.data?.versions.find((v) => v.id === script.deployment_id);
  const titleId = `script-${script.id}`;
  return (
    <section class="panel script" aria-labelledby={titleId}>
      <div class="title-row">
        <h2 id={titleId} class="script-name">
          {script.id}
        </h2>
        <ConfirmButton label="Delete" confirmLabel={`Delete ${script.id}`} onConfirm={onDelete} />
      </div>
      <dl class="facts" aria-label={`${script.id} at a glance`}>
        <div>
          <dt>Serving</dt>
          <dd>{script.deployment_id === null ? 'nothing (no deployment)' : current ? `version ${current.number}` : <code>{script.deployment_id}</code>}</dd>
        </div>
        <div>
          <dt>Deployed</dt>
          <dd>{formatDate(details.data?.deployments[0]?.created_on ?? script.modified_on)}</dd>
        </div>
        <div>
          <dt>Compatibility date</dt>
          <dd>{script.compatibility_date ?? '—'}</dd>
        </div>
      </dl>
      {details.error !== undefined && <Errors error={details.error} title={`The details of ${script.id} could not be read`} />}
      {details.data === undefined ? (
        details.error === undefined && <Loading what={`the details of ${script.id}`} />
      ) : (
        <div class="script-details">
          <div>
            <h3>Routes</h3>
            {details.data.routes.length === 0 ? (
              <p class="muted">No routes: the script serves no zone's requests.</p>
            ) : (
              <ul class="plain-list">
                {details.data.routes.map((r) => (
                  <li key={r.id}>
                    <code class="wrap">{r.pattern}</code>
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div>
            <h3>Bindings{current && <span class="muted small"> of version {current.number}</span>}</h3>
            {!current ? (
              <p class="muted">No version is serving.</p>
            ) : current.resources.bindings.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <dl>
                {current.resources.bindings.map((b) => (
                  <div key={b.name}>
                    <dt>
                      <code>{b.name}</code>
                    </dt>
                    <dd>{bindingText(b)}</dd>
                  </div>
                ))}
              </dl>
            )}
          </div>
          {script.deployment_id !== null && (
            <div class="script-wide">
              <ScriptTail scriptPath={path} script={script.id} />
            </div>
          )}
          <details class="script-versions">
            <summary>
              Versions ({details.data.versions.length}) and deployments ({details.data.deployments.length})
            </summary>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Version</th>
                    <th scope="col">Uploaded</th>
                    <th scope="col">Message</th>
                    <th scope="col">Id</th>
                  </tr>
                </thead>
                <tbody>
                  {details.data.versions.map((v) => (
                    <tr key={v.id}>
                      <th scope="row">
                        {v.number}
                        {v.id === script.deployment_id && (
                          <>
                            {' '}
                            <span class="badge badge-ok">serving</span>
                          </>
                        )}
                      </th>
                      <td data-label="Uploaded">{formatDate(v.metadata.created_on)}</td>
                      <td data-label="Message">{v.annotations['workers/message'] ?? <span class="muted">—</span>}</td>
                      <td data-label="Id">
                        <code class="wrap">{v.id}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <ol class="plain-list small">
              {details.data.deployments.map((d) => {
                const number = details.data!.versions.find((v) => v.id === d.versions[0]?.version_id)?.number;
                return (
                  <li key={d.id}>
                    {formatDate(d.created_on)}: deployed version {number ?? d.versions[0]?.version_id}
                    {d.annotations['workers/message'] && ` (${d.annotations['workers/message']})`}
                  </li>
                );
              })}
            </ol>
          </details>
        </div>
      )}
    </section>
  );
}

/** What a binding gives the script, in words. */
function bindingText(binding: Binding): string {
  switch (binding.type) {
    case 'r2_bucket':
      return `bucket ${binding.bucket_name ?? '?'}`;
    case 'plain_text':
      return `text "${binding.text ?? ''}"`;
    case 'json':
      return `JSON ${JSON.stringify(binding.json)}`;
    case 'secret_text':
      return 'secret (its value is never shown)';
    default:
      return binding.type;
  }
}
