import { expect, open, reload, snap, test } from '../support/fixtures';

test('changing retention saves it and shows the new configuration version', async ({ signedIn: page }, testInfo) => {
  await page.getByRole('link', { name: 'Settings' }).click();
  const version = page.getByTestId('configuration-version');
  await expect(version).toHaveText(/Configuration version \d+/);
  const before = Number((await version.textContent())?.replace(/\D+/g, ''));
  const payloadDays = page.getByLabel('Payload retention (days)');
  const next = (await payloadDays.inputValue()) === '14' ? '21' : '14';
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settings');
  // Limits read in words, with the API's name beside them; the admission rate says how it is held to.
  const limits = page.getByRole('table', { name: 'Limits' });
  const admission = limits.locator('tr[data-limit="admission_rate"]');
  await expect(admission).toContainText('Messages accepted');
  await expect(admission).toContainText('enforced per team by the admission bucket');
  await expect(limits).not.toContainText('not measured');
  // Use beside the limit where the API reports it: the team's pending deliveries.
  await expect(limits.locator('tr[data-limit="max_pending_deliveries"]').getByTestId('limit-use')).toContainText(
    /^\d[\d,]* of 100,000/,
  );
  await snap(page, testInfo, '1-before');

  await payloadDays.fill(next);
  await page.getByLabel('Response body logging').check();
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByText(`Configuration version ${before + 1}.`)).toBeVisible();
  await expect(version).toHaveText(`Configuration version ${before + 1}`);

  await reload(page);
  await expect(page.getByLabel('Payload retention (days)')).toHaveValue(next);
  await expect(page.getByLabel('Response body logging')).toBeChecked();
  await snap(page, testInfo, '2-saved');
});

test('an out-of-range retention shows the error next to that field and saves nothing', async ({
  signedIn: page,
}, testInfo) => {
  await open(page, '/settings');
  const version = (await page.getByTestId('configuration-version').textContent()) ?? '';
  expect(version).toMatch(/Configuration version \d+/);
  const payloadDays = page.getByLabel('Payload retention (days)');
  await payloadDays.fill('45');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(payloadDays).toHaveAccessibleDescription(/from 1 to 30/);
  await expect(payloadDays).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByLabel('Response retention (days)')).not.toHaveAttribute('aria-invalid', 'true');
  await reload(page);
  await expect(page.getByTestId('configuration-version')).toHaveText(version);
  await snap(page, testInfo, 'out-of-range');
});
