/**
 * PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration and DeleteBucketLifecycle
 * (`?lifecycle` on a bucket): S3's LifecycleConfiguration document to and from the engine's rules
 * (src/store/engine/lifecycle.ts), which the R2 API's lifecycle routes and the dashboard share.
 *
 * Supported, as S3 writes them: `ID`, `Status`, a prefix (`Filter` > `Prefix`, `Filter` > `And` >
 * `Prefix`, or the older rule-level `Prefix`, read back in the form it was written), `Expiration` in
 * `Days` or at a `Date` (midnight UTC),
 * one `Transition` to STANDARD_IA, `AbortIncompleteMultipartUpload` > `DaysAfterInitiation`. What
 * the store cannot do is refused, naming it, and nothing is stored: filters on tags or sizes and
 * noncurrent-version actions and delete markers (buckets are never versioned) are NotImplemented,
 * transitions to other storage classes InvalidStorageClass. A document that does not follow the
 * schema is MalformedXML; S3's own value errors (Days not positive, a Date not at midnight) are
 * InvalidArgument with S3's words. As S3, a PUT must carry Content-MD5 or a flexible checksum.
 */
import { randomBytes } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { daysToSeconds, type LifecycleCondition, type LifecycleRule } from '../../engine/lifecycle.ts';
import { readConfigurationDocument } from '../configuration-document.ts';
import { requireBucket, sendEmpty, sendXml, type S3Context } from '../context.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import { decodeXmlText, element, REQUEST_XML_MAX_DEPTH, xmlDocument } from '../xml.ts';

type Operation = (ctx: S3Context) => Promise<void>;

/** The largest document taken: 1,000 rules of a few hundred bytes each. */
const DOCUMENT_BYTES = 1024 * 1024;

/** The operation for a bucket request naming `?lifecycle`. */
export function lifecycleOperation(method: string): Operation {
  switch (method) {
    case 'GET':
      return getBucketLifecycle;
    case 'PUT':
      return putBucketLifecycle;
    case 'DELETE':
      return deleteBucketLifecycle;
    default:
      throw S3_ERRORS.methodNotAllowed();
  }
}

const lifecycleXml = new XMLParser({
  // Values untrimmed: a prefix (or an ID) may begin or end with spaces, as keys may.
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  maxNestedTags: REQUEST_XML_MAX_DEPTH - 1,
  entityDecoder: { decode: decodeXmlText, setExternalEntities() {}, addInputEntities() {}, reset() {}, setXmlVersion() {} },
  // Rules and transitions repeat; every other element is kept as a list too, so a second one is seen (and refused).
  isArray: () => true,
});

type Element = Record<string, unknown[]>;

const RULE_FIELDS = new Set([
  'ID',
  'Filter',
  'Prefix',
  'Status',
  'Expiration',
  'Transition',
  'NoncurrentVersionTransition',
  'NoncurrentVersionExpiration',
  'AbortIncompleteMultipartUpload',
]);

/** Thrown while reading: the answer is that S3 error (anything else is MalformedXML). */
class Refusal extends Error {
  readonly error: S3Error;
  constructor(error: S3Error) {
    super(error.message);
    this.error = error;
  }
}

function malformed(): never {
  throw new Error('malformed');
}

/** The child elements of `value` (an element holding elements), or {} for an empty one; whitespace between them is fine, other text is not. */
function elementOf(value: unknown): Element {
  if (typeof value === 'string' && value.trim() === '') return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) malformed();
  const { '#text': between, ...children } = value as Record<string, unknown>;
  if (between !== undefined && String(between).trim() !== '') malformed();
  return children as Element;
}

/** The one child named `name`, if present (twice is malformed). */
function one(parent: Element, name: string): unknown {
  const list = parent[name];
  if (list === undefined) return undefined;
  if (list.length !== 1) malformed();
  return list[0];
}

function text(parent: Element, name: string): string | undefined {
  const value = one(parent, name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    if (value !== null && typeof value === 'object' && Object.keys(value).length === 0) return '';
    malformed();
  }
  return value;
}

function positiveDays(raw: string, what: string): number {
  const value = raw.trim();
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1)
    throw new Refusal(S3_ERRORS.invalidArgument(`'${what}' must be a positive integer, not ${JSON.stringify(value)}.`));
  return Number(value);
}

/** A Date as S3 takes it: ISO 8601, at midnight UTC. */
function midnightDate(raw: string): number {
  const value = raw.trim();
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}(T[0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) || Number.isNaN(ms)) {
    throw new Refusal(S3_ERRORS.invalidArgument(`'Date' must be an ISO 8601 date such as 2030-01-01T00:00:00.000Z, not ${JSON.stringify(value)}.`));
  }
  if (ms % 86_400_000 !== 0) throw new Refusal(S3_ERRORS.invalidArgument(`'Date' must be at midnight GMT, not ${value}.`));
  return ms;
}

/** Days or Date of an Expiration or Transition (exactly one). */
function condition(action: Element, name: string): LifecycleCondition {
  const days = text(action, 'Days');
  const date = text(action, 'Date');
  if ((days === undefined) === (date === undefined)) malformed();
  return days !== undefined ? { afterSeconds: daysToSeconds(positiveDays(days, `Days' in '${name}`)) } : { date: midnightDate(date!) };
}

/** The prefix a rule's Filter (or rule-level Prefix) names; filters edgeport cannot apply are refused. */
function prefixOf(rule: Element): string {
  const legacy = text(rule, 'Prefix');
  const filterValue = one(rule, 'Filter');
  if (filterValue === undefined) return legacy ?? '';
  if (legacy !== undefined) malformed();
  const filter = elementOf(filterValue);
  const names = Object.keys(filter);
  if (names.length > 1) malformed();
  const only = names[0];
  if (only === undefined) return '';
  if (only === 'Prefix') return text(filter, 'Prefix')!;
  if (only === 'And') {
    const and = elementOf(one(filter, 'And'));
    for (const name of Object.keys(and)) {
      if (name === 'Tag') throw new Refusal(S3_ERRORS.notImplemented('A lifecycle filter on object tags (Filter > And > Tag)'));
      if (name === 'ObjectSizeGreaterThan' || name === 'ObjectSizeLessThan')
        throw new Refusal(S3_ERRORS.notImplemented(`A lifecycle filter on object size (${name})`));
      if (name !== 'Prefix') malformed();
    }
    return text(and, 'Prefix') ?? '';
  }
  if (only === 'Tag') throw new Refusal(S3_ERRORS.notImplemented('A lifecycle filter on object tags (Filter > Tag)'));
  if (only === 'ObjectSizeGreaterThan' || only === 'ObjectSizeLessThan')
    throw new Refusal(S3_ERRORS.notImplemented(`A lifecycle filter on object size (${only})`));
  return malformed();
}

function ruleOf(value: unknown): LifecycleRule {
  const rule = elementOf(value);
  for (const name of Object.keys(rule)) if (!RULE_FIELDS.has(name)) malformed();
  if (rule.NoncurrentVersionTransition || rule.NoncurrentVersionExpiration) {
    throw new Refusal(S3_ERRORS.notImplemented('Lifecycle actions on noncurrent versions (buckets are never versioned)'));
  }
  const status = text(rule, 'Status')?.trim();
  if (status !== 'Enabled' && status !== 'Disabled') malformed();
  const out: LifecycleRule = { id: text(rule, 'ID') ?? randomBytes(12).toString('base64url'), enabled: status === 'Enabled', prefix: prefixOf(rule) };
  if (rule.Prefix !== undefined) out.prefixAtRule = true;
  const expiration = one(rule, 'Expiration');
  if (expiration !== undefined) {
    const action = elementOf(expiration);
    if (action.ExpiredObjectDeleteMarker)
      throw new Refusal(S3_ERRORS.notImplemented('ExpiredObjectDeleteMarker (buckets are never versioned, so they hold no delete markers)'));
    out.expiration = condition(action, 'Expiration');
  }
  const transitions = rule.Transition ?? [];
  if (transitions.length > 1) throw new Refusal(S3_ERRORS.notImplemented('More than one Transition in a rule (the one other storage class is STANDARD_IA)'));
  if (transitions.length === 1) {
    const action = elementOf(transitions[0]);
    const storageClass = text(action, 'StorageClass')?.trim();
    if (storageClass !== 'STANDARD_IA') {
      throw new Refusal(
        new S3Error(
          'InvalidStorageClass',
          400,
          `The storage class you specified is not valid: a transition goes to STANDARD_IA, the one class besides STANDARD, not ${storageClass ?? '(none)'}.`,
        ),
      );
    }
    out.transition = condition(action, 'Transition');
  }
  const abort = one(rule, 'AbortIncompleteMultipartUpload');
  if (abort !== undefined) {
    const days = text(elementOf(abort), 'DaysAfterInitiation');
    if (days === undefined) malformed();
    out.abortUploadsAfterSeconds = daysToSeconds(positiveDays(days, 'DaysAfterInitiation'));
  }
  return out;
}

/** The rules of a LifecycleConfiguration document, or the S3 error that refuses it. */
export function parseLifecycleConfiguration(document: string): LifecycleRule[] {
  try {
    const parsed = lifecycleXml.parse(document, true) as Element;
    const roots = Object.keys(elementOf(parsed)).filter((name) => name !== '?xml');
    if (roots.length !== 1 || roots[0] !== 'LifecycleConfiguration') malformed();
    const config = elementOf(one(parsed, 'LifecycleConfiguration'));
    if (Object.keys(config).some((name) => name !== 'Rule')) malformed();
    const rules = config.Rule ?? [];
    if (rules.length === 0) malformed();
    return rules.map(ruleOf);
  } catch (error) {
    if (error instanceof Refusal) throw error.error;
    throw S3_ERRORS.malformedXml();
  }
}

/** An age or a date as S3 writes it: whole Days (a rule set through the R2 API in other seconds is rounded up), or the Date. */
function conditionXml(condition: LifecycleCondition): string {
  return 'afterSeconds' in condition ? element('Days', Math.ceil(condition.afterSeconds / 86_400)) : element('Date', new Date(condition.date).toISOString());
}

export function lifecycleConfigurationXml(rules: readonly LifecycleRule[]): string {
  const inner = rules
    .map(
      (rule) =>
        `<Rule>${element('ID', rule.id)}` +
        (rule.prefixAtRule ? element('Prefix', rule.prefix) : `<Filter>${element('Prefix', rule.prefix)}</Filter>`) +
        element('Status', rule.enabled ? 'Enabled' : 'Disabled') +
        (rule.expiration ? `<Expiration>${conditionXml(rule.expiration)}</Expiration>` : '') +
        (rule.transition ? `<Transition>${conditionXml(rule.transition)}${element('StorageClass', 'STANDARD_IA')}</Transition>` : '') +
        (rule.abortUploadsAfterSeconds !== undefined
          ? `<AbortIncompleteMultipartUpload>${element('DaysAfterInitiation', Math.ceil(rule.abortUploadsAfterSeconds / 86_400))}</AbortIncompleteMultipartUpload>`
          : '') +
        '</Rule>',
    )
    .join('');
  return xmlDocument('LifecycleConfiguration', inner);
}

async function putBucketLifecycle(ctx: S3Context): Promise<void> {
  const rules = parseLifecycleConfiguration(await readConfigurationDocument(ctx, DOCUMENT_BYTES, 'lifecycle configuration'));
  await ctx.engine.putBucketLifecycle(requireBucket(ctx), rules);
  sendEmpty(ctx, 200);
}

async function getBucketLifecycle(ctx: S3Context): Promise<void> {
  const rules = await ctx.engine.getBucketLifecycle(requireBucket(ctx));
  if (rules === null) throw new S3Error('NoSuchLifecycleConfiguration', 404, 'The lifecycle configuration does not exist');
  sendXml(ctx, 200, lifecycleConfigurationXml(rules));
}

async function deleteBucketLifecycle(ctx: S3Context): Promise<void> {
  await ctx.engine.putBucketLifecycle(requireBucket(ctx), null);
  sendEmpty(ctx, 204);
}
