/** XML for the S3 API: escaping, response documents and the error body (one helper for all). */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** `<Name>value</Name>` with the value escaped; undefined values are left out. */
export function element(name: string, value: string | number | boolean | undefined): string {
  return value === undefined ? '' : `<${name}>${escapeXml(String(value))}</${name}>`;
}

export function xmlDocument(root: string, inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</${root}>`;
}

export function errorXml(code: string, message: string, resource: string, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${element('Code', code)}${element('Message', message)}${element('Resource', resource)}${element('RequestId', requestId)}</Error>`;
}
