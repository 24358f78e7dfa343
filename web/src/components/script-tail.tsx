/**
 * A script's live tail in the page: opens a tail (POST .../tails), connects to its WebSocket
 * (trace-v1) and lists each request the script serves as it comes (newest first, the last
 * MAX_EVENTS kept): when, method, URL, status or outcome, its console lines and exceptions. Stop
 * (or leaving the page) closes the socket, which ends the tail on the server (one not yet
 * connected is closed with DELETE .../tails/:id).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api.ts';
import { Errors } from './common.tsx';

const MAX_EVENTS = 100;

interface TailEvent {
  outcome: string;
  eventTimestamp: number;
  event: { request?: { url: string; method: string }; response?: { status: number } };
  logs: Array<{ message: unknown; level: string; timestamp: number }>;
  exceptions: Array<{ name: string; message: string; timestamp: number }>;
}

interface Open {
  id: string;
  socket: WebSocket;
}

export function ScriptTail({ scriptPath, script }: { scriptPath: string; script: string }) {
  const [state, setState] = useState<'off' | 'opening' | 'watching'>('off');
  const [events, setEvents] = useState<Array<TailEvent & { n: number }>>([]);
  const [error, setError] = useState<unknown>();
  const open = useRef<Open | null>(null);
  const counter = useRef(0);

  const stop = (tail = open.current) => {
    if (!tail) return;
    open.current = null;
    // A connected tail ends with its socket (the server closes the session); one not yet connected is closed by its id.
    if (tail.socket.readyState !== WebSocket.OPEN) void call('DELETE', `${scriptPath}/tails/${encodeURIComponent(tail.id)}`).catch(() => undefined);
    tail.socket.close(1000);
    setState('off');
  };
  // Leaving the page closes the tail.
  useEffect(() => () => stop(), []);

  const start = async () => {
    setError(undefined);
    setState('opening');
    try {
      const { id, url } = (await call<{ id: string; url: string }>('POST', `${scriptPath}/tails`, {})).result;
      const socket = new WebSocket(url, 'trace-v1');
      const tail = { id, socket };
      open.current = tail;
      socket.onopen = () => setState('watching');
      socket.onmessage = (message) => {
        const event = JSON.parse(String(message.data)) as TailEvent;
        setEvents((list) => [{ ...event, n: ++counter.current }, ...list].slice(0, MAX_EVENTS));
      };
      socket.onclose = () => {
        if (open.current === tail) {
          open.current = null;
          setState('off');
          setError(new Error('The tail was closed by the server (it expires after 6 hours, or the script was deleted or redeployed elsewhere).'));
        }
      };
    } catch (e) {
      setError(e);
      setState('off');
    }
  };

  const regionId = `tail-${script}`;
  return (
    <div class="script-tail">
      <h3 id={regionId}>Live tail</h3>
      <div class="tail-head">
        {state === 'off' ? (
          <button type="button" onClick={start}>
            Start live tail
          </button>
        ) : (
          <button type="button" onClick={() => stop()}>
            Stop live tail
          </button>
        )}
        <span class="muted small" role="status">
          {state === 'opening'
            ? 'Opening…'
            : state === 'watching'
              ? `Watching ${script}: each request it serves shows here (the first second after starting may be missed).`
              : ''}
        </span>
      </div>
      <Errors error={error} title="The live tail stopped" />
      {events.length > 0 && (
        <ol class="tail-events" aria-labelledby={regionId} tabIndex={0}>
          {events.map((e) => (
            <li key={e.n} class={e.outcome === 'ok' ? undefined : 'tail-bad'}>
              <span class="tail-line">
                <span class="muted">{new Date(e.eventTimestamp).toLocaleTimeString()}</span> <strong>{e.event.request?.method}</strong>{' '}
                <code class="wrap">{e.event.request?.url}</code> {e.event.response ? <span class="badge">{e.event.response.status}</span> : null}{' '}
                {e.outcome !== 'ok' && <span class="badge badge-bad">{e.outcome}</span>}
              </span>
              {e.logs.map((log, i) => (
                <pre key={`l${i}`} class="tail-log">
                  {log.level}: {Array.isArray(log.message) ? log.message.map(text).join(' ') : text(log.message)}
                </pre>
              ))}
              {e.exceptions.map((x, i) => (
                <pre key={`x${i}`} class="tail-log tail-exception">
                  {x.name}: {x.message}
                </pre>
              ))}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
