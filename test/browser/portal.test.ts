// The developer portal in a real browser (Debian's chromium through playwright-core; skipped where
// /usr/bin/chromium is missing, installed by .ci/run in CI): the sign-in redirect carries `next` and
// returns to the page after signing in with the demo key; a guide and the reference render with the
// portal's stylesheet; the reference's search finds an operation; sign-out ends the session; no page
// logs a console error or requests anything outside the server. Screenshots of the homepage and a
// guide (laptop and phone) go to test/artifacts/ (ignored by git).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;

let s: TestServer;
let browser: BrowserContext;
let profile: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  s = await startTestServer({ app: { portalOidc: null } });
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await s?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function watchedPage(): Promise<{ page: Page; errors: string[]; outside: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const outside: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(s.url) || url.startsWith('data:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return { page, errors, outside };
}

describe.skipIf(!existsSync(CHROMIUM))('the portal in chromium', () => {
  it('the homepage renders with the stylesheet', async () => {
    const { page, errors, outside } = await watchedPage();
    await page.goto(`${s.url}/`);
    expect(await page.textContent('h1')).toContain('svc Platform API');
    // The stylesheet applied: the cards are a grid.
    expect(await page.evaluate(`getComputedStyle(document.querySelector('.cards')).display`)).toBe('grid');
    await page.screenshot({ path: join(ARTIFACTS, 'portal-home.png'), fullPage: true });
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);

  it('a signed-in page sends the browser to sign-in with next, and back after signing in with the demo key', async () => {
    const { page, errors, outside } = await watchedPage();
    await page.goto(`${s.url}/docs/mcp`);
    const url = new URL(page.url());
    expect(url.pathname).toBe('/console/sign-in');
    expect(url.searchParams.get('next')).toBe('/docs/mcp');
    await page.fill('input[name=key]', s.credentials.operatorKey);
    await Promise.all([page.waitForURL(`${s.url}/docs/mcp`), page.click('form[action="/console/sign-in"] button[type=submit]')]);
    expect(page.url()).not.toContain(s.credentials.operatorKey);
    expect(await page.textContent('h1')).toBe('Connect over MCP');
    // The guide renders its code blocks and tables, with this server's address filled in.
    expect(await page.locator('pre code').count()).toBeGreaterThan(3);
    expect(await page.textContent('main')).toContain(`${s.config.baseUrl}/mcp`);
    // (cookies(url) leaves Secure cookies out for an http:// URL; chromium keeps them for loopback.)
    const cookies = await browser.cookies();
    const session = cookies.find((c) => c.name === 'svc_session')!;
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
    await page.screenshot({ path: join(ARTIFACTS, 'portal-guide.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    // Readable on a phone: nothing wider than the screen but scrollable code and tables.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, 'portal-guide-phone.png') });
    await page.setViewportSize({ width: 1280, height: 720 });

    // The reference and its search (it fetches /search-index.json with the session).
    await page.goto(`${s.url}/reference`);
    await page.fill('#search', 'tasks.create');
    await page.waitForSelector('#search-results a[href="/reference/tasks#taskscreate"]');
    await page.click('#search-results a[href="/reference/tasks#taskscreate"]');
    await page.waitForURL(`${s.url}/reference/tasks#taskscreate`);
    expect(await page.isVisible('#taskscreate')).toBe(true);

    // Sign-out ends the session: the guide asks for sign-in again.
    await Promise.all([page.waitForURL(`${s.url}/`), page.click('form[action="/console/sign-out"] button')]);
    await page.goto(`${s.url}/docs/mcp`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('public pages show no console error and reach nothing outside', async () => {
    const { page, errors, outside } = await watchedPage();
    for (const path of ['/operators', '/client-admins', '/docs', '/security', '/status', '/problems', '/problems/rate_limited', '/request-access', '/changelog']) {
      const res = await page.goto(`${s.url}${path}`);
      expect(res!.status(), path).toBe(200);
      expect(await page.locator('link[rel=stylesheet][href="/portal.css"]').count(), path).toBe(1);
    }
    await page.goto(`${s.url}/request-access`);
    await page.fill('input[name=name]', 'Ada Example');
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=organisation]', 'Acme');
    await page.click('form[action="/request-access"] button[type=submit]');
    await page.waitForSelector('text=Request sent');
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
