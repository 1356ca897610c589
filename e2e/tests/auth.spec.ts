import type { Response } from '@playwright/test';
import { expect, open, signIn, snap, test } from '../support/fixtures';

const SESSION_COOKIE = 'svc_console_session';
const TWELVE_HOURS_S = 12 * 3600;

test('the icons are served without a session (Chromium asks for /favicon.ico on its own)', async ({ request }) => {
  const icons: [path: string, type: string][] = [
    ['/favicon.ico', 'image/x-icon'],
    ['/icon.svg', 'image/svg+xml'],
  ];
  for (const [path, type] of icons) {
    const response = await request.get(path, { maxRedirects: 0 });
    expect(response.status(), path).toBe(200);
    expect(response.headers()['content-type'], path).toBe(type);
    expect((await response.body()).length, path).toBeGreaterThan(100);
  }
});

test('a wrong key shows an error next to the key field; the right key opens the dashboard', async ({
  page,
  stack,
}, testInfo) => {
  await open(page, '/sign-in');
  const keyField = page.getByLabel('Secret key');
  await keyField.fill(`svc_sk_${'x'.repeat(43)}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(keyField).toHaveAccessibleDescription(/This key was not accepted/);
  await expect(keyField).toHaveAttribute('aria-invalid', 'true');
  await expect(page).toHaveURL(/\/sign-in$/);
  await snap(page, testInfo, '1-wrong-key');

  await keyField.fill(stack.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  await expect(page.getByTestId('dashboard-scope')).toHaveText(/^Showing the whole team, /);
  // The worker's team: the local team of `npm start`, or one global setup made for a second worker.
  await expect(page.getByTestId('team-name')).toHaveText(stack.teamName);
  await snap(page, testInfo, '2-signed-in');
});

test('signing out returns to the sign-in page and every page then redirects there', async ({
  ownSession: page,
  context,
}, testInfo) => {
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(page.getByLabel('Secret key')).toBeVisible();
  expect(await context.cookies()).toEqual([]);

  for (const path of ['/tenants', '/event-types', '/settings', '/']) {
    await open(page, path);
    await expect(page, `${path} should go to sign-in`).toHaveURL(/\/sign-in$/);
  }
  await snap(page, testInfo, 'signed-out');
});

test('after sign-out a copy of the old session cookie no longer opens the console', async ({
  ownSession: page,
  context,
}, testInfo) => {
  const [session] = await context.cookies();
  expect(session?.name).toBe(SESSION_COOKIE);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  expect(await context.cookies()).toEqual([]);

  // Someone who copied the cookie before sign-out puts it back.
  await context.addCookies([session!]);
  for (const path of ['/tenants', '/settings']) {
    await open(page, path);
    await expect(page, `${path} with the replayed cookie`).toHaveURL(/\/sign-in\?expired=1$/);
    await expect(page.getByRole('alert', { name: 'Signed out' })).toContainText('session has ended');
    await expect(page.getByRole('table')).toHaveCount(0);
  }
  await snap(page, testInfo, 'replayed-cookie');
});

test('a cookie with an unknown session or a raw key from an old console opens nothing', async ({
  page,
  context,
  stack,
}, testInfo) => {
  await context.addCookies([
    { name: SESSION_COOKIE, value: `svc_cs_${'r'.repeat(43)}`, url: stack.consoleUrl, httpOnly: true, secure: true },
  ]);
  await open(page, '/event-types');
  await expect(page).toHaveURL(/\/sign-in\?expired=1$/);
  await expect(page.getByRole('alert', { name: 'Signed out' })).toContainText('session has ended');
  await expect(page.getByRole('heading', { name: 'Event types' })).toHaveCount(0);
  await snap(page, testInfo, 'unknown-session');

  // The cookie of consoles that kept the key itself is not a session any more.
  await context.clearCookies();
  await context.addCookies([{ name: 'svc_console_key', value: stack.key, url: stack.consoleUrl, httpOnly: true }]);
  await open(page, '/tenants');
  await expect(page).toHaveURL(/\/sign-in$/);
});

test('the cookie holds an expiring session, not the key: Secure, HttpOnly, SameSite=Lax, 12 hours', async ({
  page,
  context,
  stack,
}, testInfo) => {
  const bodies: Promise<{ url: string; body: string }>[] = [];
  page.on('response', (response: Response) => {
    bodies.push(
      response
        .text()
        .then((body) => ({ url: response.url(), body }))
        .catch(() => ({ url: response.url(), body: '' })), // redirects have no body
    );
  });

  const signedInAt = Date.now() / 1000;
  await signIn(page, stack.key);
  for (const path of ['/tenants', '/event-types', '/settings']) {
    await open(page, path);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    expect(await page.content(), `HTML of ${path}`).not.toContain(stack.key);
  }
  // Client-side navigation fetches RSC payloads rather than HTML; they must not carry the key either.
  await page.getByRole('link', { name: 'Tenants' }).click();
  await expect(page.getByRole('heading', { name: 'Tenants' })).toBeVisible();

  expect(await page.evaluate(() => document.cookie)).toBe('');
  const storage = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
  expect(storage).not.toContain(stack.key);

  const cookies = await context.cookies();
  expect(cookies).toHaveLength(1);
  const [cookie] = cookies;
  expect(cookie).toMatchObject({ name: SESSION_COOKIE, httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
  expect(cookie!.value).toMatch(/^svc_cs_/);
  expect(cookie!.value).not.toContain(stack.key.slice('svc_sk_'.length));
  // Max-Age is the session's remaining life: about 12 hours from sign-in, not a browser-session cookie.
  expect(cookie!.expires).toBeGreaterThan(signedInAt + TWELVE_HOURS_S - 120);
  expect(cookie!.expires).toBeLessThanOrEqual(Date.now() / 1000 + TWELVE_HOURS_S + 5);

  const seen = await Promise.all(bodies);
  expect(seen.length).toBeGreaterThan(5);
  expect(seen.filter(({ body }) => body.includes(stack.key)).map(({ url }) => url)).toEqual([]);
  await snap(page, testInfo, 'signed-in');
});

test('every page sends a Content-Security-Policy that forbids framing; another site cannot frame the console', async ({
  page,
  stack,
  browserErrors,
}, testInfo) => {
  const signInResponse = await open(page, '/sign-in');
  await signIn(page, stack.key);
  const tenantsResponse = await open(page, '/tenants');
  for (const response of [signInResponse!, tenantsResponse!]) {
    const policy = response.headers()['content-security-policy'] ?? '';
    expect(policy, response.url()).toContain("frame-ancestors 'none'");
    expect(policy, response.url()).toContain("default-src 'self'");
    expect(policy, response.url()).toMatch(/script-src 'self' 'nonce-[^']+'/);
    expect(response.headers()['x-frame-options'], response.url()).toBe('DENY');
  }
  // The policy does not get in the console's own way: the page is interactive (browserErrors stays empty).
  await page.getByRole('button', { name: 'New tenant' }).click();
  await expect(page.getByRole('dialog', { name: 'New tenant' })).toBeVisible();
  await page.keyboard.press('Escape');

  // A page elsewhere (another origin) that frames the console gets nothing.
  await page.goto('about:blank');
  await page.setContent(`<iframe id="console" src="${stack.consoleUrl}/tenants" width="800" height="600"></iframe>`);
  // Chromium replaces a refused frame with its error page.
  await expect
    .poll(() =>
      page
        .frames()
        .find((frame) => frame !== page.mainFrame())
        ?.url(),
    )
    .toMatch(/^chrome-error:/);
  await expect(page.frameLocator('#console').getByRole('heading', { name: 'Tenants' })).toHaveCount(0);
  await snap(page, testInfo, 'framed');
  // A report of the refusal itself is the only browser error this test expects.
  browserErrors.splice(0, browserErrors.length, ...browserErrors.filter((line) => !line.includes('frame-ancestors')));
});

test('a page fetches no other page ahead: each sidebar page loads when it is opened', async ({
  signedIn: page,
}, testInfo) => {
  const sidebar = page.getByRole('navigation', { name: 'Main navigation' });
  const sidebarPaths = await sidebar
    .getByRole('link')
    .evaluateAll((links) => links.map((link) => new URL((link as HTMLAnchorElement).href).pathname));
  expect(sidebarPaths).toHaveLength(13);
  // The router asks for a page ahead of a click with this header; with prefetching, every page asked for all 13.
  const prefetched: string[] = [];
  page.on('request', (request) => {
    const headers = request.headers();
    if (headers['next-router-prefetch'] || headers['next-router-segment-prefetch'])
      prefetched.push(new URL(request.url()).pathname);
  });
  await open(page, '/settings');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settings');
  await page.waitForLoadState('networkidle');
  await sidebar.getByRole('link', { name: 'Event types' }).hover();
  await page.waitForLoadState('networkidle');
  expect(prefetched.filter((path) => sidebarPaths.includes(path))).toEqual([]);

  // Opened by a click, the page comes all the same.
  await sidebar.getByRole('link', { name: 'Event types' }).click();
  await expect(page).toHaveURL(/\/event-types$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Event types');
  await snap(page, testInfo, 'no-prefetch');
});
