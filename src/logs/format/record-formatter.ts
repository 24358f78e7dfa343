/**
 * Turns records into a job's output (output_options, as the real service formats them): only
 * field_names, in their order; timestamps in the job's format; ndjson (default) or csv framing with
 * the record/field/batch affixes; an optional record_template (`{{ .Field }}`, `{{ "literal" }}`,
 * comments); and the `CVE-2021-44228` option, which replaces every `${` with `x{`.
 */
import type { LogOutputOptions } from '../../db/control-store.ts';
import { HTTP_REQUESTS_FIELDS, isHttpRequestsField } from '../http-requests-fields.ts';
import { formatTimestamp } from './timestamps.ts';

type Render = (record: Readonly<Record<string, unknown>>) => string;

export interface RecordFormatter {
  /** One record's text, affixes included. */
  format(record: Readonly<Record<string, unknown>>): string;
  readonly batchPrefix: string;
  readonly batchSuffix: string;
  readonly recordDelimiter: string;
}

export function createRecordFormatter(options: LogOutputOptions): RecordFormatter {
  const csv = options.outputType === 'csv';
  const value = (name: string): Render => {
    const isTimestamp = isHttpRequestsField(name) && HTTP_REQUESTS_FIELDS[name].type === 'timestamp';
    if (isTimestamp)
      return (record) => {
        const ms = record[name];
        return typeof ms === 'number' ? formatTimestamp(ms, options.timestampFormat) : 'null';
      };
    return csv ? (record) => csvValue(record[name]) : (record) => jsonValue(record[name]);
  };
  let render: Render;
  if (options.recordTemplate !== null) {
    // Fields the template names but field_names does not list render as null.
    render = compileTemplate(options.recordTemplate, (name) => (options.fieldNames.includes(name) ? value(name) : () => 'null'));
  } else {
    const parts = options.fieldNames.map((name) => {
      const v = value(name);
      if (csv) return v;
      const key = `${JSON.stringify(name)}:`;
      return (record: Readonly<Record<string, unknown>>) => key + v(record);
    });
    const delimiter = options.fieldDelimiter;
    render = (record) => {
      let out = '';
      for (let i = 0; i < parts.length; i++) out += i === 0 ? parts[i]!(record) : delimiter + parts[i]!(record);
      return out;
    };
  }
  const { recordPrefix, recordSuffix } = options;
  const cve = options.cve202144228;
  return {
    format(record) {
      const text = recordPrefix + render(record) + recordSuffix;
      return cve && text.includes('${') ? text.replaceAll('${', 'x{') : text;
    },
    batchPrefix: options.batchPrefix,
    batchSuffix: options.batchSuffix,
    recordDelimiter: options.recordDelimiter,
  };
}

/** Printable ASCII but `"` and `\\`: such a string is its own JSON text between quotes. */
const PLAIN_JSON_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function jsonValue(value: unknown): string {
  if (typeof value === 'string') return PLAIN_JSON_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
  if (value === undefined) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value);
}

/** CSV: strings double-quoted ("" inside), numbers and booleans bare, objects as quoted JSON. */
function csvValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `"${text.replaceAll('"', '""')}"`;
}

const ACTION = /\{\{-?\s*(?:\/\*[\s\S]*?\*\/|\.([A-Za-z0-9_]+)|"((?:[^"\\]|\\.)*)"|`([^`]*)`)\s*-?\}\}/g;

/** A record_template: text with `{{ .Field }}`, `{{ "literal" }}`, a back-quoted literal, and Go template comments. */
function compileTemplate(template: string, value: (name: string) => Render): Render {
  const pieces: Array<string | Render> = [];
  let last = 0;
  for (const match of template.matchAll(ACTION)) {
    if (match.index > last) pieces.push(template.slice(last, match.index));
    const [, field, quoted, raw] = match;
    if (field !== undefined) pieces.push(value(field));
    else if (quoted !== undefined) pieces.push(JSON.parse(`"${quoted}"`) as string);
    else if (raw !== undefined) pieces.push(raw);
    last = match.index + match[0].length;
  }
  if (last < template.length) pieces.push(template.slice(last));
  return (record) => {
    let out = '';
    for (const piece of pieces) out += typeof piece === 'string' ? piece : piece(record);
    return out;
  };
}
