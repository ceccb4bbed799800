// /v1/docs and the changelog in a real browser: Debian's chromium driven by playwright-core.
// .ci/run installs chromium when missing, so CI always runs this file; on a machine without
// /usr/bin/chromium it is skipped (never downloaded through playwright).
// Any request outside the server fails the test, as does any console error. Screenshots go to
// test/artifacts/ (ignored by git).
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
  s = await startTestServer();
  // A fresh profile directory (playwright passes it to chromium as --user-data-dir).
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

/** A page that records console errors and refuses every request outside the server. */
async function watchedPage(): Promise<{ page: Page; errors: string[]; outside: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const outside: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(s.url) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return { page, errors, outside };
}

describe.skipIf(!existsSync(CHROMIUM))('in chromium', () => {
  it('/v1/docs lists every operation after entering the demo key, and try-it of meta.get shows its result', async () => {
    const { page, errors, outside } = await watchedPage();
    await page.goto(`${s.url}/v1/docs`);
    await page.fill('#key', s.credentials.operatorKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('#bar', { state: 'visible' });
    const doc = (await (await fetch(`${s.url}/v1/openapi.json`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } })).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const opIds = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId!).filter(Boolean));
    const count = opIds.length;
    expect(count).toBe(82);
    expect(await page.locator('#try-op option').count()).toBe(count);
    // Redoc renders one section per operation.
    await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 30_000 });
    const sections = new Set(await page.locator('[data-section-id^="operation/"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-section-id'))));
    for (const id of opIds) expect(sections.has(`operation/${id}`), id).toBe(true);
    // Redoc's sidebar shows its menu: the first family's entry is the element at its own centre
    // (it was hidden under Redoc's fixed footer when the try-it panel stood above the page).
    await page.waitForSelector('.menu-content li[data-item-id="tag/actions"]');
    const menuVisible = async () =>
      page.evaluate(`(() => { const li = document.querySelector('.menu-content li[data-item-id="tag/actions"]'); const b = li.getBoundingClientRect();
        return b.height > 0 && b.bottom <= innerHeight && li.contains(document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2)); })()`);
    expect(await menuVisible()).toBe(true);
    await page.click('#try summary');
    await page.selectOption('#try-op', { label: (await page.locator('#try-op option', { hasText: /^meta\.get — / }).textContent())! });
    await page.click('#try-send');
    await page.waitForFunction(() => /^200 /.test(document.getElementById('try-result')!.textContent ?? ''));
    expect(await page.textContent('#try-result')).toContain('contractVersion');
    expect(await page.evaluate(() => location.href)).not.toContain(s.credentials.operatorKey);
    await page.click('#try summary');
    expect(await menuVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'v1-docs.png') });
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('the changelog renders as HTML', async () => {
    const { page, errors, outside } = await watchedPage();
    await page.goto(`${s.url}/changelog`);
    expect(await page.textContent('h1')).toContain('Changelog');
    await page.screenshot({ path: join(ARTIFACTS, 'changelog.png') });
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);
});
