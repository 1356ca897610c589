import { expect, open, snap, test, unique } from '../support/fixtures';

test('tenants, endpoints and event types show their IDs with a button that copies them', async ({
  signedIn: page,
  api,
  context,
  stack,
}, testInfo) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.consoleUrl });
  const externalId = `ids-${unique()}`;
  const tenant = await api.createTenant(externalId, 'Copy Corp');
  const endpoint = await api.createEndpoint({
    tenant_id: tenant.id,
    url: 'https://ids.example.com/hook',
    name: 'Copied hook',
  });
  const eventTypeName = `ids.${unique()}`;
  const eventType = await api.createEventType(eventTypeName);
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  await open(page, `/tenants?externalId=${externalId}`);
  const row = page.getByRole('row').filter({ hasText: externalId });
  await expect(row).toContainText(tenant.id);
  await row.getByRole('button', { name: `Copy ID of ${externalId}` }).click();
  await expect(row.getByRole('button', { name: `Copy ID of ${externalId}` })).toHaveText('Copied');
  expect(await clipboard()).toBe(tenant.id);
  await snap(page, testInfo, '1-tenant-id');

  await row.getByRole('link', { name: `Endpoints of ${externalId}` }).click();
  await expect(page.getByText(tenant.id, { exact: true })).toBeVisible();
  const endpointRow = page.getByRole('row').filter({ hasText: 'Copied hook' });
  await expect(endpointRow).toContainText(endpoint.id);
  await endpointRow.getByRole('button', { name: 'Copy ID of Copied hook' }).click();
  expect(await clipboard()).toBe(endpoint.id);
  await snap(page, testInfo, '2-endpoint-id');

  await endpointRow.getByRole('link', { name: 'Copied hook' }).click();
  await page.getByRole('button', { name: 'Copy ID of tenant Copy Corp' }).click();
  expect(await clipboard()).toBe(tenant.id);

  await open(page, `/event-types?name=${eventTypeName}`);
  const typeRow = page.getByRole('row').filter({ hasText: eventTypeName });
  await expect(typeRow).toContainText(eventType.id);
  await typeRow.getByRole('button', { name: `Copy ID of ${eventTypeName}` }).click();
  expect(await clipboard()).toBe(eventType.id);
  await snap(page, testInfo, '3-event-type-id');
});

test('an endpoint is created for a tenant picked by name, and the endpoint list filters by tenant name', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const run = unique();
  const picked = await api.createTenant(`pick-${run}`, `Picked Inc ${run}`);
  await api.createTenant(`other-${run}`, `Other Ltd ${run}`);

  await page.getByRole('link', { name: 'Endpoints', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Endpoints' })).toBeVisible();
  await page.getByRole('button', { name: 'New endpoint' }).click();
  const form = page.getByRole('dialog', { name: 'New endpoint' });
  await form.getByLabel('URL').fill('https://picked.example.com/hook');
  await form.getByLabel('Name').fill(`Picked hook ${run}`);
  await form.getByRole('button', { name: 'Create endpoint' }).click();
  await expect(form.getByRole('textbox', { name: 'Tenant' })).toHaveAccessibleDescription(/Pick the tenant/);

  await form.getByRole('textbox', { name: 'Tenant' }).fill(`picked inc ${run}`);
  await expect(page.getByRole('option', { name: new RegExp(`Other Ltd ${run}`) })).toHaveCount(0);
  await page.getByRole('option', { name: `Picked Inc ${run} (pick-${run})` }).click();
  await snap(page, testInfo, '1-tenant-picked');
  await form.getByRole('button', { name: 'Create endpoint' }).click();
  const secret = page.getByRole('dialog', { name: 'Signing secret', exact: true });
  await expect(secret.getByTestId('signing-secret')).toHaveText(/^whsec_\S+$/);
  await secret.getByRole('button', { name: 'I have stored it' }).click();
  await expect(secret).toBeHidden();

  const filter = page.getByRole('textbox', { name: 'Tenant' });
  await filter.fill(`pick-${run}`);
  await page.getByRole('option', { name: `Picked Inc ${run} (pick-${run})` }).click();
  await expect(page).toHaveURL(new RegExp(`/endpoints\\?tenant=${picked.id}$`));
  const table = page.getByRole('table', { name: 'Endpoints' });
  await expect(table.getByRole('row').filter({ hasText: `Picked hook ${run}` })).toContainText(`Picked Inc ${run}`);
  await expect(table.locator('tbody tr')).toHaveCount(1);
  await snap(page, testInfo, '2-filtered');

  await filter.fill(`Other Ltd ${run}`);
  await page.getByRole('option', { name: `Other Ltd ${run} (other-${run})` }).click();
  await expect(table).toContainText(`Other Ltd ${run} has no endpoints yet.`);
  await snap(page, testInfo, '3-other-tenant');
});

test('an external-ID filter that matches nothing says so, and recognises a tenant ID pasted there', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const externalId = `slip-${unique()}`;
  const tenant = await api.createTenant(externalId, 'Slip Co');

  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Tenants' }).click();
  await expect(page).toHaveURL(/\/tenants$/);
  await page.getByLabel('Find by external ID').fill(externalId.toUpperCase());
  await page.getByRole('button', { name: 'Find' }).click();
  const notice = page.getByRole('alert').filter({ hasText: 'No tenant has this external ID' });
  await expect(notice).toContainText(`“${externalId.toUpperCase()}”`);
  await expect(notice).toContainText('must match exactly');
  await snap(page, testInfo, '1-no-match');

  await page.getByLabel('Find by external ID').fill(tenant.id);
  await page.getByRole('button', { name: 'Find' }).click();
  await expect(notice).toContainText(`is the tenant ID of Slip Co (external ID ${externalId})`);
  await notice.getByRole('link', { name: 'open its endpoints' }).click();
  await expect(page).toHaveURL(new RegExp(`/tenants/${tenant.id}/endpoints$`));
  await snap(page, testInfo, '2-tenant-id-recognised');
});
