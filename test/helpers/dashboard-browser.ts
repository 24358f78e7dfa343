/**
 * The web dashboard in a real browser, for the dashboard e2e tests: `edgeport start` plus Debian's
 * Chromium (headless, driven by playwright-core), both stopped when the test ends; a screenshot
 * and an axe-core run per page; a record of what went wrong while a page loaded (console errors,
 * page errors, failed requests, HTTP errors); the phone-width overflow check; sign-in.
 *
 * Needs /usr/bin/chromium (`apt-get install -y chromium`) and a built dashboard (`npm run build`):
 * without them the tests fail, they do not skip.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type BrowserContextOptions, type Page, type Request } from 'playwright-core';
import { startEdgeport, type EdgeportServer } from './edgeport-server.ts';
import { tempDir } from './temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
/** Where the screenshots go (not committed). */
export const SHOTS = join(ROOT, 'test-results', 'dashboard');
const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const EMAIL = 'owner@example.test';
export const KEY = 'dashboard-test-key-0123456789abcdef0123';
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 812 };

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** A screenshot of the page as it is, then axe-core inside the page: serious or critical violations fail. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  // evaluate() runs through the DevTools protocol, so the page's CSP (script-src 'self') stays on.
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as AxeViolation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`),
    [],
    `accessibility violations on the ${name} page`,
  );
}

/**
 * No sideways scrolling: the page is no wider than the window, and the window is as wide as the
 * viewport the test set (a mobile viewport widens its layout to fit content that sticks out).
 */
export async function assertNoHorizontalOverflow(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()!.width;
  const [scrollWidth, innerWidth, wide] = (await page.evaluate(`[document.documentElement.scrollWidth, innerWidth,
    [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width} + 0.5)
      .slice(0, 5).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : ''))]`)) as [number, number, string[]];
  assert.ok(
    scrollWidth <= innerWidth && innerWidth <= width,
    `${name}: the page is ${scrollWidth}px wide in a ${innerWidth}px window, on a ${width}px screen (wider: ${wide.join(', ')})`,
  );
}

/** What went wrong in the page since the last `take()`. */
export interface PageProblems {
  /**
   * Console errors, page errors, failed requests and HTTP errors, as lines; empties the record.
   * A request aborted because the page that made it was navigated away from (a poll cut short by
   * the next page.goto) is no problem of either page, whenever the abort is reported.
   */
  take(): string[];
}

export function watchPage(page: Page): PageProblems {
  let seen: string[] = [];
  // Navigations of the main frame so far, and how many there had been when each request started.
  let navigations = 0;
  const startedAfter = new WeakMap<Request, number>();
  let aborted: Array<{ request: Request; line: string }> = [];
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations++;
  });
  page.on('request', (request) => startedAfter.set(request, navigations));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) seen.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => seen.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const error = request.failure()?.errorText;
    const line = `request failed: ${request.method()} ${request.url()} (${error})`;
    // Judged when taken: Chromium may report the abort before the navigation that caused it.
    if (error === 'net::ERR_ABORTED') aborted.push({ request, line });
    else seen.push(line);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) seen.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return {
    take() {
      const ofCurrentPage = aborted.filter(({ request }) => (startedAfter.get(request) ?? navigations) >= navigations);
      const taken = [...seen, ...ofCurrentPage.map(({ line }) => line)];
      seen = [];
      aborted = [];
      return taken;
    },
  };
}

export interface Dashboard {
  server: EdgeportServer;
  /** The management API's origin, which serves the dashboard. */
  api: string;
  /** The temporary directory the server's data dir is in. */
  dir: string;
  context: BrowserContext;
  page: Page;
  problems: PageProblems;
  /** A GET of the management API as the account owner (X-Auth-Email / X-Auth-Key); the envelope's result. */
  apiGet(path: string): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- envelope shapes vary
  /** Any call of the management API as the owner (a string body as it is, else JSON); throws unless it succeeds. */
  apiCall(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- envelope shapes vary
}

/**
 * Starts `edgeport start` (with the owner's e-mail and key) and a browser page on it. `env` adds
 * to the server's environment (given the test's temporary directory); `context` to the browser
 * context's options (viewport, permissions).
 */
export async function startDashboard(
  t: TestContext,
  options: { env?: (dir: string) => NodeJS.ProcessEnv; context?: BrowserContextOptions } = {},
): Promise<Dashboard> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium); this test does not skip`);
  assert.ok(existsSync(join(ROOT, 'web/dist/index.html')), 'the dashboard is not built: run npm run build (npm test does)');
  mkdirSync(SHOTS, { recursive: true });
  const dir = tempDir(t, 'edgeport-dashboard-');
  const server = await startEdgeport({ dataDir: join(dir, 'data'), env: { EDGEPORT_ADMIN_EMAIL: EMAIL, EDGEPORT_ADMIN_KEY: KEY, ...options.env?.(dir) } });
  t.after(() => server.stop());
  const api = new URL(server.urls['management API']!).origin;
  // launch() gives the browser a fresh temporary profile (user-data-dir) of its own, removed on close.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: DESKTOP, ...options.context });
  const page = await context.newPage();
  const problems = watchPage(page);
  const owner = { 'x-auth-email': EMAIL, 'x-auth-key': KEY };
  const apiCall = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    // A string is sent as it is (an object's bytes), anything else as JSON.
    const json = body !== undefined && typeof body !== 'string';
    const response = await fetch(`${api}/client/v4${path}`, {
      method,
      headers: { ...owner, ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as string) }),
    });
    const envelope = (await response.json()) as { success: boolean; result: unknown; errors: unknown[] };
    assert.ok(envelope.success, `${method} ${path}: ${response.status} ${JSON.stringify(envelope.errors)}`);
    return envelope.result;
  };
  return { server, api, dir, context, page, problems, apiGet: (path) => apiCall('GET', path), apiCall };
}

/** Signs in through the sign-in page (where `page` is) and waits for the page it leads to. */
export async function signIn(page: Page): Promise<void> {
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
