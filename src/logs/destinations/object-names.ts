/**
 * Names of delivered batches, as the real service dates them: `<path>/<YYYYMMDD>/<start>_<end>_<id>.log.gz`
 * with start and end as `YYYYMMDDTHHMMSSZ` of the batch's first and last records; when the
 * configured path holds `{DATE}`, that is replaced by the day instead of adding a day folder.
 */
import { createHash } from 'node:crypto';

export function compactTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

export function day(ms: number): string {
  return compactTime(ms).slice(0, 8);
}

/** The object name of a batch within its destination path; `seed` makes it stable across retries. */
export function batchObjectName(path: string, firstTime: number, lastTime: number, seed: string): string {
  const id = createHash('sha256').update(seed).digest('hex').slice(0, 8);
  const file = `${compactTime(firstTime)}_${compactTime(lastTime)}_${id}.log.gz`;
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  if (trimmed.includes('{DATE}')) return `${trimmed.replaceAll('{DATE}', day(firstTime))}/${file}`;
  return trimmed === '' ? `${day(firstTime)}/${file}` : `${trimmed}/${day(firstTime)}/${file}`;
}
