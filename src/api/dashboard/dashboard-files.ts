/**
 * The web dashboard's files (built by `npm run build` into web/dist), served by the management
 * API's listener outside `/client/`: files by path, `index.html` for every other page path (the
 * dashboard routes on the client), and a page saying how to build it when the build is missing.
 *
 * By design: pages get a strict Content-Security-Policy (scripts and styles of this origin only;
 * connections to this origin and to the gateway, whose JSON-RPC console the dashboard has) and may
 * not be framed.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** web/dist of this checkout. */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

export interface DashboardFilesOptions {
  /** The built dashboard (default web/dist). */
  dir: string;
  /** Origins besides this one that pages may connect to (the gateway's). */
  connectOrigins: (request: Request) => string[];
}

export function createDashboardFiles(options: DashboardFilesOptions): (request: Request) => Promise<Response> {
  const root = normalize(options.dir.endsWith(sep) ? options.dir : options.dir + sep);
  return async function serveDashboard(request) {
    let path: string;
    try {
      path = decodeURIComponent(new URL(request.url).pathname);
    } catch {
      return notFound();
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root) || path.includes('\0')) return notFound();
    const isPage = extname(path) === '';
    const target = isPage ? join(root, 'index.html') : file;
    let body: Buffer;
    try {
      if (!(await stat(target)).isFile()) return isPage ? missingBuild(root) : notFound();
      body = await readFile(target);
    } catch {
      return isPage ? missingBuild(root) : notFound();
    }
    const headers = new Headers({
      'content-type': CONTENT_TYPES[extname(target)] ?? 'application/octet-stream',
      'x-content-type-options': 'nosniff',
      // Vite names built assets by content hash: they never change under one name.
      'cache-control': path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (target.endsWith('.html')) {
      headers.set('content-security-policy', pagePolicy(options.connectOrigins(request)));
      headers.set('x-frame-options', 'DENY');
      headers.set('referrer-policy', 'no-referrer');
    }
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers });
  };
}

function pagePolicy(connectOrigins: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${connectOrigins.map((origin) => ` ${origin}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

function notFound(): Response {
  return new Response('Not found\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } });
}

function missingBuild(root: string): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edgeport dashboard not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5; color: #1a1a1a">
<main>
<h1>The dashboard has not been built</h1>
<p>This server found no dashboard files in <code>${escapeHtml(root)}</code>.
Run <code>npm run build</code> in the edgeport checkout (<code>npm start</code> does it for you), then reload this page.</p>
<p>The management API itself is up at <a href="/client/v4/openapi.json">/client/v4</a>.</p>
</main>
</body></html>
`;
  return new Response(html, {
    status: 503,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    },
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
