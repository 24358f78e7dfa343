/**
 * XML for the S3 API: escaping, response documents, the error body, and the parser of request
 * documents (DeleteObjects, CompleteMultipartUpload).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * The five markup characters by name; control characters (tab, CR and LF included) as numeric
 * references, as S3 writes them: a literal CR would reach the client as LF (XML end-of-line
 * handling), and the other C0 controls are not allowed in XML text at all.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_ESCAPE = /[&<>"'\u0000-\u001f]/g;

export function escapeXml(text: string): string {
  return text.replace(NEEDS_ESCAPE, (c) => ESCAPES[c] ?? `&#${c.charCodeAt(0)};`);
}

/** `<Name>value</Name>` with the value escaped; undefined values are left out. */
export function element(name: string, value: string | number | boolean | undefined): string {
  return value === undefined ? '' : `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** The one owner every access key acts as (ListBuckets, ACLs, ListObjectVersions, uploads' initiator). */
export const OWNER_FIELDS = '<ID>edgeport</ID><DisplayName>edgeport</DisplayName>';
export const OWNER_XML = `<Owner>${OWNER_FIELDS}</Owner>`;

export function xmlDocument(root: string, inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</${root}>`;
}

/** The error document; `fields` are the error's own elements, after its Message as S3 writes them. */
export function errorXml(code: string, message: string, resource: string, requestId: string, fields: Readonly<Record<string, string | number>> = {}): string {
  const own = Object.entries(fields)
    .map(([name, value]) => element(name, value))
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${element('Code', code)}${element('Message', message)}${own}${element('Resource', resource)}${element('RequestId', requestId)}</Error>`;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const REFERENCE = /&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g;

/** XML's references in text: the five named entities and numeric ones; anything else is left as written. */
export function decodeXmlText(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(REFERENCE, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name]!;
    const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex!, 16);
    return code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/**
 * Request documents. Values are kept exactly: untrimmed (a key may begin or end with spaces) and
 * with numeric character references decoded (the AWS SDKs send CR and LF in keys as &#x0D; and
 * &#x0A;; Go clients such as rclone send quotes as &#34;). Documents nest three elements deep
 * (Delete > Object > Key); past REQUEST_XML_MAX_DEPTH elements inside one another (the root
 * included) the parser throws as it reads the opening tag, before building anything recursively,
 * and the operation answers MalformedXML.
 */
export const REQUEST_XML_MAX_DEPTH = 16;

export const requestXml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  // fast-xml-parser counts the elements open around the one being opened: the root is not among them.
  maxNestedTags: REQUEST_XML_MAX_DEPTH - 1,
  entityDecoder: { decode: decodeXmlText, setExternalEntities() {}, addInputEntities() {}, reset() {}, setXmlVersion() {} },
  isArray: (name) => name === 'Object' || name === 'Part',
});

/**
 * A request document (DeleteObjects, CompleteMultipartUpload), parsed; throws unless it is
 * well-formed XML. The parser alone is lenient (an unclosed or mismatched tag still parses), so a
 * truncated or garbled document would be acted on: it is validated too, after the parse, whose
 * depth limit refuses a deeply nested document before the validator walks it.
 */
export function parseRequestXml(text: string): unknown {
  const doc: unknown = requestXml.parse(text);
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new Error(`Not well-formed XML: ${valid.err.msg}`);
  return doc;
}
