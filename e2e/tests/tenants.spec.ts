import { expect, open, reload, snap, test, unique } from '../support/fixtures';

test('create a tenant with metadata; a second one with the same external ID is refused at that field', async ({
  signedIn: page,
}, testInfo) => {
  const externalId = `cust-${unique()}`;
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Tenants' }).click();
  await expect(page).toHaveURL(/\/tenants$/);
  await page.getByRole('button', { name: 'New tenant' }).click();
  const dialog = page.getByRole('dialog', { name: 'New tenant' });
  await dialog.getByLabel('External ID').fill(externalId);
  await dialog.getByLabel('Name').fill('Acme Corp');
  await dialog.getByLabel('Metadata key 1').fill('plan');
  await dialog.getByLabel('Metadata value 1').fill('pro');
  await snap(page, testInfo, '1-create-form');
  await dialog.getByRole('button', { name: 'Create tenant' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByText('Tenant Acme Corp created.')).toBeVisible();

  await page.getByLabel('Find by external ID').fill(externalId);
  await page.getByRole('button', { name: 'Find' }).click();
  const row = page.getByRole('row').filter({ hasText: externalId });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('Acme Corp');
  await expect(row).toContainText('plan=pro');
  await expect(row).toContainText('active');
  await snap(page, testInfo, '2-created');
  // On a laptop-wide screen the columns give way, yet the status keeps its whole word (it once read "ACTI...").
  await page.setViewportSize({ width: 1024, height: 900 });
  const status = row.locator('.mantine-Badge-label').filter({ hasText: 'active' });
  await expect(status).toBeVisible();
  expect(await status.evaluate((label) => label.scrollWidth - label.clientWidth), 'width the badge cuts off').toBe(0);
  await snap(page, testInfo, '2b-narrow');
  await page.setViewportSize({ width: 1366, height: 900 });

  await page.getByRole('button', { name: 'New tenant' }).click();
  await dialog.getByLabel('External ID').fill(externalId);
  await dialog.getByLabel('Name').fill('Acme again');
  await dialog.getByRole('button', { name: 'Create tenant' }).click();
  await expect(dialog.getByLabel('External ID')).toHaveAccessibleDescription(/a tenant with this external_id exists/);
  await expect(dialog.getByLabel('External ID')).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog.getByLabel('Name')).not.toHaveAttribute('aria-invalid', 'true');
  await expect(dialog).toBeVisible();
  await snap(page, testInfo, '3-duplicate-external-id');
});

test('edit a tenant: rename it and change its metadata', async ({ signedIn: page, api }, testInfo) => {
  const externalId = `edit-${unique()}`;
  await api.createTenant(externalId, 'Before Ltd', { plan: 'free', region: 'eu' });
  await open(page, `/tenants?externalId=${externalId}`);
  const row = page.getByRole('row').filter({ hasText: externalId });
  await expect(row).toContainText('plan=free');

  await row.getByRole('button', { name: `Edit ${externalId}` }).click();
  const dialog = page.getByRole('dialog', { name: `Edit tenant ${externalId}` });
  await expect(dialog.getByLabel('External ID')).toBeDisabled();
  await dialog.getByLabel('Name').fill('After Ltd');
  await dialog.getByLabel('Metadata value 1').fill('enterprise');
  await dialog.getByRole('button', { name: 'Remove metadata row 2' }).click();
  await dialog.getByRole('button', { name: 'Add metadata' }).click();
  await dialog.getByLabel('Metadata key 2').fill('owner');
  await dialog.getByLabel('Metadata value 2').fill('ops team');
  await snap(page, testInfo, '1-edit-form');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();

  await expect(row).toContainText('After Ltd');
  await expect(row).toContainText('plan=enterprise');
  await expect(row).toContainText('owner=ops team');
  await expect(row).not.toContainText('region=eu');
  await reload(page);
  await expect(page.getByRole('row').filter({ hasText: externalId })).toContainText('After Ltd');
  await snap(page, testInfo, '2-edited');
});

test('paging: more than 20 tenants spread over pages; Next page and First page move between them', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const batch = unique();
  for (let i = 0; i < 23; i++) await api.createTenant(`page-${batch}-${String(i).padStart(2, '0')}`, `Paged ${i}`);

  await open(page, '/tenants');
  const rows = page.getByRole('table', { name: 'Tenants' }).locator('tbody tr');
  // The first cell holds the external ID, then the tenant ID with its copy button.
  const firstExternalId = rows.first().locator('td').first().locator('p').first();
  await expect(rows).toHaveCount(20);
  const firstOnPageOne = await firstExternalId.innerText();
  await expect(page.getByRole('button', { name: 'First page' })).toBeDisabled();
  await snap(page, testInfo, '1-page-one');

  await page.getByRole('link', { name: 'Next page' }).click();
  await expect(page).toHaveURL(/[?&]after=/);
  await expect(firstExternalId).not.toHaveText(firstOnPageOne);
  const firstOnPageTwo = await firstExternalId.innerText();
  await expect(page.getByRole('link', { name: 'First page' })).toBeVisible();
  await snap(page, testInfo, '2-page-two');

  await page.getByRole('link', { name: 'First page' }).click();
  await expect(page).toHaveURL(/\/tenants$/);
  await expect(rows).toHaveCount(20);
  await expect(firstExternalId).toHaveText(firstOnPageOne);
  await expect(page.getByRole('table', { name: 'Tenants' })).not.toContainText(firstOnPageTwo);
  await snap(page, testInfo, '3-back-to-page-one');
});

test('delete a tenant after confirming: it shows a deleted badge and no actions', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const externalId = `gone-${unique()}`;
  await api.createTenant(externalId, 'Short Lived Inc');
  await open(page, `/tenants?externalId=${externalId}`);
  const row = page.getByRole('row').filter({ hasText: externalId });
  await row.getByRole('button', { name: `Delete ${externalId}` }).click();

  const dialog = page.getByRole('dialog', { name: 'Delete tenant' });
  await expect(dialog).toContainText('Short Lived Inc');
  await snap(page, testInfo, '1-confirm');
  await dialog.getByRole('button', { name: 'Delete tenant' }).click();
  await expect(dialog).toBeHidden();

  await expect(row.getByText('deleted', { exact: true })).toBeVisible();
  await expect(row.getByRole('button', { name: `Edit ${externalId}` })).toHaveCount(0);
  await expect(row.getByRole('button', { name: `Delete ${externalId}` })).toHaveCount(0);
  await expect(row.getByRole('link', { name: `Endpoints of ${externalId}` })).toHaveCount(0);
  await snap(page, testInfo, '2-deleted');
});
