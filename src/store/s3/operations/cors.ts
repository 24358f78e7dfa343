/**
 * PutBucketCors, GetBucketCors and DeleteBucketCors (`?cors` on a bucket): S3's CORSConfiguration
 * document to and from the engine's rules. Validation is S3's (the engine's assertCorsRules):
 * unknown methods, a second wildcard, more than 100 rules are InvalidRequest; a document that does
 * not follow the schema is MalformedXML; more than 64 KiB is refused before it is parsed. As S3,
 * a PUT must carry Content-MD5 or a flexible checksum (x-amz-checksum-*), and it is checked
 * (configuration-document.ts).
 */
import { XMLParser } from 'fast-xml-parser';
import { CORS_LIMITS, type CorsMethod, type CorsRule } from '../../engine/cors.ts';
import { requireBucket, sendEmpty, sendXml, type S3Context } from '../context.ts';
import { readConfigurationDocument } from '../configuration-document.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import { decodeXmlText, element, REQUEST_XML_MAX_DEPTH, xmlDocument } from '../xml.ts';

type Operation = (ctx: S3Context) => Promise<void>;

/** The operation for a bucket request naming `?cors`. */
export function corsOperation(method: string): Operation {
  switch (method) {
    case 'GET':
      return getBucketCors;
    case 'PUT':
      return putBucketCors;
    case 'DELETE':
      return deleteBucketCors;
    default:
      throw S3_ERRORS.methodNotAllowed();
  }
}

const LISTS = new Set(['CORSRule', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader', 'ID', 'MaxAgeSeconds']);
const RULE_FIELDS = new Set(['ID', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader', 'MaxAgeSeconds']);

const corsXml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  maxNestedTags: REQUEST_XML_MAX_DEPTH - 1,
  entityDecoder: { decode: decodeXmlText, setExternalEntities() {}, addInputEntities() {}, reset() {}, setXmlVersion() {} },
  // Every repeatable element is an array, so a one-element list reads like a longer one; ID and
  // MaxAgeSeconds too, so a second one is seen (and refused) rather than silently merged.
  isArray: (name) => LISTS.has(name),
});

/** The element names inside `value`; whitespace between elements is fine, other text is not. */
function childNames(value: unknown): string[] {
  if (value === '') return [];
  if (value === null || typeof value !== 'object') throw new Error('not an element list');
  const record = value as Record<string, unknown>;
  if ('#text' in record && String(record['#text']).trim() !== '') throw new Error('text between elements');
  return Object.keys(record).filter((name) => name !== '#text');
}

/** Text of a list of elements holding text only; throws when one holds elements instead. */
function texts(value: unknown): string[] {
  if (value === undefined) return [];
  return (value as unknown[]).map((item) => {
    if (typeof item === 'string') return item;
    // An empty element (`<AllowedHeader/>`) parses as ''.
    if (item !== null && typeof item === 'object' && Object.keys(item).length === 0) return '';
    throw new Error('not text');
  });
}

/** The rules of a CORSConfiguration document; MalformedXML unless it follows S3's schema. */
export function parseCorsConfiguration(text: string): CorsRule[] {
  try {
    const doc = corsXml.parse(text, true) as Record<string, unknown>;
    const roots = childNames(doc).filter((name) => name !== '?xml');
    if (roots.length !== 1 || roots[0] !== 'CORSConfiguration') throw new Error('root');
    const config = doc.CORSConfiguration;
    if (childNames(config).some((name) => name !== 'CORSRule')) throw new Error('config');
    const rules = (config as { CORSRule?: unknown[] }).CORSRule ?? [];
    if (rules.length === 0) throw new Error('no rule');
    return rules.map((raw): CorsRule => {
      if (childNames(raw).some((name) => !RULE_FIELDS.has(name))) throw new Error('rule');
      const fields = raw as Record<string, unknown>;
      const ids = texts(fields.ID);
      const maxAges = texts(fields.MaxAgeSeconds);
      if (ids.length > 1 || maxAges.length > 1) throw new Error('repeated');
      if (maxAges.length === 1 && !/^\d{1,9}$/.test(maxAges[0]!.trim())) throw new Error('max age');
      const rule: CorsRule = {
        allowedOrigins: texts(fields.AllowedOrigin),
        allowedMethods: texts(fields.AllowedMethod) as CorsMethod[],
        allowedHeaders: texts(fields.AllowedHeader),
        exposeHeaders: texts(fields.ExposeHeader),
      };
      if (rule.allowedOrigins.length === 0 || rule.allowedMethods.length === 0) throw new Error('required');
      if (ids.length === 1) rule.id = ids[0]!;
      if (maxAges.length === 1) rule.maxAgeSeconds = Number(maxAges[0]!.trim());
      return rule;
    });
  } catch {
    throw S3_ERRORS.malformedXml();
  }
}

export function corsConfigurationXml(rules: readonly CorsRule[]): string {
  const inner = rules
    .map(
      (rule) =>
        `<CORSRule>${element('ID', rule.id)}` +
        rule.allowedHeaders.map((h) => element('AllowedHeader', h)).join('') +
        rule.allowedMethods.map((m) => element('AllowedMethod', m)).join('') +
        rule.allowedOrigins.map((o) => element('AllowedOrigin', o)).join('') +
        rule.exposeHeaders.map((h) => element('ExposeHeader', h)).join('') +
        `${element('MaxAgeSeconds', rule.maxAgeSeconds)}</CORSRule>`,
    )
    .join('');
  return xmlDocument('CORSConfiguration', inner);
}

async function putBucketCors(ctx: S3Context): Promise<void> {
  const rules = parseCorsConfiguration(await readConfigurationDocument(ctx, CORS_LIMITS.documentBytes, 'CORS configuration'));
  await ctx.engine.putBucketCors(requireBucket(ctx), rules);
  sendEmpty(ctx, 200);
}

async function getBucketCors(ctx: S3Context): Promise<void> {
  const rules = await ctx.engine.getBucketCors(requireBucket(ctx));
  if (rules === null) throw new S3Error('NoSuchCORSConfiguration', 404, 'The CORS configuration does not exist');
  sendXml(ctx, 200, corsConfigurationXml(rules));
}

async function deleteBucketCors(ctx: S3Context): Promise<void> {
  await ctx.engine.putBucketCors(requireBucket(ctx), null);
  sendEmpty(ctx, 204);
}
