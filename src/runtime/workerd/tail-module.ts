/**
 * The tail worker edgeport gives workerd beside an uploaded script (workerd's `tails`): after each
 * request the script served, workerd hands it the request's trace (request, response status,
 * console output, uncaught exceptions). It passes on only the traces of requests the server marked
 * (a header named with a secret generated per start, set only while a tail session watches the
 * script), as JSON to the server's tail sink; every other trace ends here, in the isolate.
 */

/** The tail worker's source; `markHeader` is the request header the server sets on watched requests; `scriptName` names the script in its events (workerd knows no name). */
export function tailModuleSource(markHeader: string, scriptName: string): string {
  return `const MARK = ${JSON.stringify(markHeader)};
const SCRIPT = ${JSON.stringify(scriptName)};
function plain(value) {
  try { return JSON.parse(JSON.stringify(value ?? null)); } catch { return String(value); }
}
export default {
  async tail(events, env) {
    const watched = [];
    for (const item of events) {
      const request = item.event?.request;
      if (!request || request.headers?.[MARK] === undefined) continue;
      const headers = {};
      const logs = [];
      const exceptions = (item.exceptions ?? []).map((e) => ({ name: e.name, message: e.message, timestamp: e.timestamp }));
      for (const log of item.logs ?? []) {
        const message = plain(log.message);
        // The entry module's line for an exception the script threw (it answers the failure itself, so workerd sees none).
        if (Array.isArray(message) && message[0] === MARK) exceptions.push({ name: String(message[1]?.name), message: String(message[1]?.message), timestamp: log.timestamp });
        else logs.push({ message, level: log.level, timestamp: log.timestamp });
      }
      for (const [name, value] of Object.entries(request.headers)) if (name !== MARK) headers[name] = value;
      watched.push({
        outcome: exceptions.length > 0 && item.outcome === 'ok' ? 'exception' : item.outcome,
        scriptName: item.scriptName ?? SCRIPT,
        eventTimestamp: item.eventTimestamp,
        event: {
          request: { url: request.url, method: request.method, headers, cf: plain(request.cf) },
          response: item.event.response ? { status: item.event.response.status } : undefined,
        },
        logs,
        exceptions,
        diagnosticsChannelEvents: [],
      });
    }
    if (watched.length > 0) await env.sink.fetch('http://tail-sink/', { method: 'POST', body: JSON.stringify(watched) });
  },
};
`;
}
