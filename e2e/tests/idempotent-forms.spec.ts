import { expect, open, reload, snap, test, unique } from '../support/fixtures';

test('submitting the endpoint form again after its answer was lost creates one endpoint, not two', async ({
  signedIn: page,
  api,
  browserErrors,
}, testInfo) => {
  const externalId = `twice-${unique()}`;
  const tenant = await api.createTenant(externalId, 'Twice Ltd');
  await open(page, `/tenants/${tenant.id}/endpoints`);
  await page.getByRole('button', { name: 'New endpoint' }).click();
  const form = page.getByRole('dialog', { name: 'New endpoint' });
  await form.getByLabel('URL').fill('https://twice.example.com/hook');
  await form.getByLabel('Name').fill('Submitted twice');

  // The first submit reaches the console server (which creates the endpoint), but its answer never arrives.
  let lost = 0;
  await page.route(
    (url) => url.pathname === `/tenants/${tenant.id}/endpoints`,
    async (route) => {
      if (route.request().method() !== 'POST' || lost > 0) return route.fallback();
      lost += 1;
      await route.fetch();
      await route.abort('timedout');
    },
  );
  await form.getByRole('button', { name: 'Create endpoint' }).click();
  await expect(page.getByText('The console server did not answer')).toBeVisible();
  await expect(form).toBeVisible();
  await snap(page, testInfo, '1-answer-lost');

  await form.getByRole('button', { name: 'Create endpoint' }).click();
  const secret = page.getByRole('dialog', { name: 'Signing secret', exact: true });
  await expect(secret.getByTestId('signing-secret')).toHaveText(/^whsec_\S+$/);
  await secret.getByRole('button', { name: 'I have stored it' }).click();
  expect(lost).toBe(1);

  await reload(page);
  const table = page.getByRole('table', { name: 'Endpoints' });
  await expect(table.getByRole('row').filter({ hasText: 'Submitted twice' })).toHaveCount(1);
  await expect(table.locator('tbody tr')).toHaveCount(1);
  await snap(page, testInfo, '2-one-endpoint');
  // The cut connection is reported by Chromium; it is what this test staged.
  browserErrors.splice(0, browserErrors.length, ...browserErrors.filter((line) => !/ERR_|Failed to fetch/.test(line)));
});
