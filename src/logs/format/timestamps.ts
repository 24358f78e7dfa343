/** Timestamp formats of a log job (output_options.timestamp_format); records hold epoch ms. */
import type { TimestampFormat } from '../../db/control-store.ts';

// Records arrive in time order, so consecutive ones mostly share their second: its text is reused.
let cachedSecond = Number.NaN;
let cachedIso = '';

/** `YYYY-MM-DDTHH:MM:SS` of the second holding `ms` (UTC). */
function isoSecond(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedIso = new Date(second * 1000).toISOString().slice(0, 19);
  }
  return cachedIso;
}

function millis(ms: number): string {
  const part = ((ms % 1000) + 1000) % 1000;
  return part < 10 ? `00${part}` : part < 100 ? `0${part}` : String(part);
}

/** The JSON text of a timestamp: integers for unixnano/unix, quoted RFC 3339 otherwise. */
export function formatTimestamp(ms: number, format: TimestampFormat): string {
  switch (format) {
    case 'unixnano':
      return ms === 0 ? '0' : `${Math.trunc(ms)}000000`;
    case 'unix':
      return String(Math.floor(ms / 1000));
    case 'rfc3339':
      return `"${isoSecond(ms)}Z"`;
    case 'rfc3339ms':
      return `"${isoSecond(ms)}.${millis(Math.trunc(ms))}Z"`;
    case 'rfc3339ns':
      return `"${isoSecond(ms)}.${millis(Math.trunc(ms))}000000Z"`;
  }
}
