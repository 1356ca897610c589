import type { Response } from '@playwright/test';
import { expect, signIn, snap, test } from '../support/fixtures';

test('a wrong key shows an error next to the key field; the right key opens the tenants page', async ({
  page,
  stack,
}, testInfo) => {
  await page.goto('/sign-in');
  const keyField = page.getByLabel('Secret key');
  await keyField.fill(`svc_sk_${'x'.repeat(43)}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(keyField).toHaveAccessibleDescription(/This key was not accepted/);
  await expect(keyField).toHaveAttribute('aria-invalid', 'true');
  await expect(page).toHaveURL(/\/sign-in$/);
  await snap(page, testInfo, '1-wrong-key');

  await keyField.fill(stack.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/tenants$/);
  await expect(page.getByRole('heading', { name: 'Tenants' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Tenants' })).toBeVisible();
  await expect(page.getByTestId('team-name')).toHaveText('local');
  await snap(page, testInfo, '2-signed-in');
});

test('signing out returns to the sign-in page and every page then redirects there', async ({
  signedIn: page,
  context,
}, testInfo) => {
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(page.getByLabel('Secret key')).toBeVisible();
  expect(await context.cookies()).toEqual([]);

  for (const path of ['/tenants', '/event-types', '/settings', '/']) {
    await page.goto(path);
    await expect(page, `${path} should go to sign-in`).toHaveURL(/\/sign-in$/);
  }
  await snap(page, testInfo, 'signed-out');
});

test('a cookie whose key the API no longer accepts ends the session', async ({ page, context, stack }, testInfo) => {
  await context.addCookies([
    {
      name: 'svc_console_key',
      value: `svc_sk_${'r'.repeat(43)}`,
      url: stack.consoleUrl,
      httpOnly: true,
      sameSite: 'Strict',
    },
  ]);
  await page.goto('/event-types');
  await expect(page).toHaveURL(/\/sign-in\?expired=1$/);
  await expect(page.getByRole('alert', { name: 'Signed out' })).toContainText('no longer accepts the key');
  await expect(page.getByRole('heading', { name: 'Event types' })).toHaveCount(0);
  await snap(page, testInfo, 'expired');
});

test('the key never reaches the page: not in any response body, HTML or document.cookie', async ({
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

  await signIn(page, stack.key);
  for (const path of ['/tenants', '/event-types', '/settings']) {
    await page.goto(path);
    await expect(page.getByRole('heading', { level: 2 })).toBeVisible();
    expect(await page.content(), `HTML of ${path}`).not.toContain(stack.key);
  }
  // Client-side navigation fetches RSC payloads rather than HTML; they must not carry the key either.
  await page.getByRole('link', { name: 'Tenants' }).click();
  await expect(page.getByRole('heading', { name: 'Tenants' })).toBeVisible();

  expect(await page.evaluate(() => document.cookie)).not.toContain(stack.key);
  const storage = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
  expect(storage).not.toContain(stack.key);

  const cookies = await context.cookies();
  expect(cookies).toHaveLength(1);
  expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });

  const seen = await Promise.all(bodies);
  expect(seen.length).toBeGreaterThan(5);
  expect(seen.filter(({ body }) => body.includes(stack.key)).map(({ url }) => url)).toEqual([]);
  await snap(page, testInfo, 'signed-in');
});
