import { admin, newTeamWithKey } from '../support/admin';
import { expect, open, reload, signIn, snap, test, unique } from '../support/fixtures';

test('a suspended team sees a readable explanation on every page, can sign out, and gets back in once lifted', async ({
  page,
  stack,
}, testInfo) => {
  const { teamId, key } = await newTeamWithKey(stack, `suspended-${unique()}`);
  await signIn(page, key);
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();

  await admin(stack, 'team', 'suspend', '--team', teamId);
  for (const path of [
    '/dashboard',
    '/tenants',
    `/tenants/wdt_${'0'.repeat(26)}/endpoints`,
    '/event-types',
    '/usage',
    '/settings',
  ]) {
    await open(page, path);
    const alert = page.getByRole('alert').filter({ hasText: 'Account suspended' });
    await expect(alert, path).toBeVisible();
    await expect(alert, path).toContainText('Contact the operator');
    await expect(page.getByText('Application error'), path).toHaveCount(0);
    await expect(page.getByText('This page could not be loaded'), path).toHaveCount(0);
  }
  await snap(page, testInfo, '1-suspended');

  await admin(stack, 'team', 'unsuspend', '--team', teamId);
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await expect(page.getByRole('alert').filter({ hasText: 'Account suspended' })).toHaveCount(0);
  await snap(page, testInfo, '2-lifted');

  await admin(stack, 'team', 'suspend', '--team', teamId);
  await reload(page);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByLabel('Secret key')).toHaveAccessibleDescription(/account is suspended/);
  await snap(page, testInfo, '3-sign-in-refused');
});
