import type { Locator, Page } from '@playwright/test';
import { expect, field, open, reload, type RestApi, snap, test, unique } from '../support/fixtures';

const TRANSFORM = '{"fields":[{"name":"total","from":"/amount","required":true}]}';

async function newTenant(api: RestApi, prefix: string): Promise<{ id: string; externalId: string }> {
  const externalId = `${prefix}-${unique()}`;
  const { id } = await api.createTenant(externalId, `Tenant ${externalId}`);
  return { id, externalId };
}

/** The signing secret shown in the open secret modal; checks the warning and returns the secret. */
async function shownSecret(page: Page): Promise<{ dialog: Locator; secret: string }> {
  const dialog = page.getByRole('dialog', { name: 'Signing secret', exact: true });
  await expect(dialog).toContainText('This secret is shown once; store it now. It cannot be shown again.');
  await expect(dialog.getByTestId('signing-secret')).toHaveText(/^whsec_\S+$/);
  const secret = (await dialog.getByTestId('signing-secret').textContent()) ?? '';
  return { dialog, secret };
}

test('create an endpoint with a filter and transform: its signing secret is shown once and never again', async ({
  signedIn: page,
  context,
  api,
  stack,
}, testInfo) => {
  const tenant = await newTenant(api, 'recv');
  const filter = '{"path": "/amount", "op": "gt", "value": 0}';
  await open(page, `/tenants?externalId=${tenant.externalId}`);
  await page.getByRole('link', { name: `Endpoints of ${tenant.externalId}` }).click();
  await expect(page).toHaveURL(new RegExp(`/tenants/${tenant.id}/endpoints$`));
  await expect(page.getByRole('table', { name: 'Endpoints' })).toContainText('No endpoints yet.');

  await page.getByRole('button', { name: 'New endpoint' }).click();
  const form = page.getByRole('dialog', { name: 'New endpoint' });
  await form.getByLabel('URL').fill('https://receiver.example.com/hook?token=query-secret-1');
  await form.getByLabel('Name').fill('Orders hook');
  const events = form.getByLabel('Events');
  await events.click();
  await events.press('Backspace');
  await events.fill('order.paid');
  await events.press('Enter');
  await events.fill('order.refunded');
  await events.press('Enter');
  await form.getByLabel('Header key 1').fill('X-Api-Key');
  await form.getByLabel('Header value 1').fill('header-value-1');
  await form.getByLabel('Authorization').fill('Bearer authorization-value-1');
  await form.getByLabel('Filter').fill(filter);
  await form.getByLabel('Transform').fill(TRANSFORM);
  await snap(page, testInfo, '1-create-form');
  await form.getByRole('button', { name: 'Create endpoint' }).click();

  const { dialog, secret } = await shownSecret(page);
  await expect(form).toBeHidden();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.consoleUrl });
  await dialog.getByRole('button', { name: 'Copy secret' }).click();
  await expect(dialog.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await snap(page, testInfo, '2-secret-shown-once');
  await dialog.getByRole('button', { name: 'I have stored it' }).click();
  await expect(dialog).toBeHidden();
  expect(await page.content()).not.toContain(secret);

  const row = page.getByRole('row').filter({ hasText: 'Orders hook' });
  // The scheme is part of what the operator checks; the query (often a token) stays hidden.
  await expect(row.getByText('https://receiver.example.com/hook?…', { exact: true })).toBeVisible();
  await expect(row).toContainText('enabled');
  await expect(row).toContainText('healthy');
  await expect(row.locator('td').last()).toHaveText('order.paid, order.refunded');
  expect(await page.content()).not.toContain('query-secret-1');
  await snap(page, testInfo, '3-listed');

  await row.getByRole('link', { name: 'Orders hook' }).click();
  await expect(page.getByRole('heading', { name: 'Orders hook' })).toBeVisible();
  for (let visit = 1; visit <= 2; visit++) {
    await expect(field(page, 'Endpoint settings', 'Authorization')).toHaveText('set');
    await expect(field(page, 'Endpoint settings', 'Custom headers')).toHaveText('x-api-key');
    await expect(field(page, 'Endpoint health', 'Secret version')).toHaveText('1');
    await expect.poll(() => page.getByTestId('endpoint-filter').textContent()).toBe(filter);
    await expect.poll(() => page.getByTestId('endpoint-transform').textContent()).toBe(TRANSFORM);
    const html = await page.content();
    for (const hidden of [secret, 'whsec_', 'header-value-1', 'authorization-value-1'])
      expect(html, `visit ${visit} must not show ${hidden}`).not.toContain(hidden);
    await reload(page);
  }
  await snap(page, testInfo, '4-detail-after-reload');
});

test('an unsafe URL, an invalid filter and invalid JSON are each shown at their own field', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const tenant = await newTenant(api, 'errs');
  await open(page, `/tenants/${tenant.id}/endpoints`);
  await page.getByRole('button', { name: 'New endpoint' }).click();
  const form = page.getByRole('dialog', { name: 'New endpoint' });
  const url = form.getByLabel('URL');
  const filter = form.getByLabel('Filter');
  const create = form.getByRole('button', { name: 'Create endpoint' });
  await url.fill('https://10.0.0.1/x');
  await form.getByLabel('Name').fill('Refused');
  await create.click();
  await expect(url).toHaveAccessibleDescription(/url host is .*private/i);
  await expect(url).toHaveAttribute('aria-invalid', 'true');
  await expect(filter).not.toHaveAttribute('aria-invalid', 'true');
  await snap(page, testInfo, '1-unsafe-url');

  await url.fill('https://receiver.example.com/hook');
  await filter.fill('{"all": [{"path": "/a", "op": "bogus", "value": 1}]}');
  await create.click();
  await expect(filter).toHaveAccessibleDescription(/^all\.0\.op: op must be one of .*bogus/);
  await expect(filter).toHaveAttribute('aria-invalid', 'true');
  await expect(url).not.toHaveAttribute('aria-invalid', 'true');
  await snap(page, testInfo, '2-invalid-filter');

  await filter.fill('');
  await filter.pressSequentially('{"path": "/a"');
  await expect(filter).toHaveAccessibleDescription(/Not valid JSON/);
  await expect(create).toBeDisabled();
  await snap(page, testInfo, '3-invalid-json');
  await filter.press('End');
  await filter.pressSequentially(', "op": "exists", "value": true}');
  await expect(filter).not.toHaveAttribute('aria-invalid', 'true');
  await expect(create).toBeEnabled();

  await form.getByRole('button', { name: 'Cancel' }).click();
  await expect(form).toBeHidden();
  await expect(page.getByRole('table', { name: 'Endpoints' })).toContainText('No endpoints yet.');
});

test('rotate the secret: a new one is shown once; a second rotation during the overlap is refused; overlap 0 works', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const tenant = await newTenant(api, 'rot');
  const created = await api.createEndpoint({
    tenant_id: tenant.id,
    url: 'https://receiver.example.com/rot',
    name: 'Rotating',
  });
  await open(page, `/endpoints/${created.id}`);
  const rotateDialog = page.getByRole('dialog', { name: 'Rotate signing secret' });

  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await expect(rotateDialog.getByLabel('Overlap (seconds)')).toHaveValue('86400');
  await rotateDialog.getByRole('button', { name: 'Rotate secret' }).click();
  const first = await shownSecret(page);
  expect(first.secret).not.toBe(created.signing_secret);
  await snap(page, testInfo, '1-rotated');
  await first.dialog.getByRole('button', { name: 'I have stored it' }).click();
  await expect(first.dialog).toBeHidden();
  await expect(field(page, 'Endpoint health', 'Secret version')).toHaveText('2');
  await expect(field(page, 'Endpoint health', 'Old secret expires')).toHaveText(/UTC$/);
  expect(await page.content()).not.toContain(first.secret);

  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await rotateDialog.getByRole('button', { name: 'Rotate secret' }).click();
  await expect(rotateDialog.getByRole('alert')).toContainText('a previous secret is still in its overlap');
  await expect(page.getByRole('dialog', { name: 'Signing secret', exact: true })).toHaveCount(0);
  await snap(page, testInfo, '2-refused-during-overlap');

  await rotateDialog.getByLabel('Overlap (seconds)').fill('0');
  await rotateDialog.getByRole('button', { name: 'Rotate secret' }).click();
  const second = await shownSecret(page);
  expect(second.secret).not.toBe(first.secret);
  expect(second.secret).not.toBe(created.signing_secret);
  await second.dialog.getByRole('button', { name: 'I have stored it' }).click();
  await expect(second.dialog).toBeHidden();
  await expect(field(page, 'Endpoint health', 'Secret version')).toHaveText('3');
  await expect(field(page, 'Endpoint health', 'Old secret expires')).toHaveText('no old secret');
  await reload(page);
  const html = await page.content();
  for (const secret of [created.signing_secret, first.secret, second.secret]) expect(html).not.toContain(secret);
  await snap(page, testInfo, '3-overlap-zero');
});

test('preview: exact delivered bytes, a transform error and a filter that does not match', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const tenant = await newTenant(api, 'prev');
  const eventType = `payment_${unique()}.settled`;
  await api.createEventType(eventType, 'A payment settled', '{"amount": 1.50}');
  const endpoint = await api.createEndpoint(
    { tenant_id: tenant.id, url: 'https://receiver.example.com/preview', name: 'Previewed', events: [eventType] },
    { filter: '{"path": "/test", "op": "exists", "value": false}', transform: TRANSFORM },
  );
  await open(page, `/endpoints/${endpoint.id}`);
  const payload = page.getByLabel('Sample payload');
  const run = page.getByRole('button', { name: 'Run preview' });
  const result = page.getByTestId('preview-result');
  await expect(payload).toHaveValue('{"amount": 1.50}');

  await run.click();
  await expect(result.getByTestId('preview-matches')).toHaveText('would be delivered');
  await expect.poll(() => result.getByTestId('preview-body').textContent()).toBe('{"total":1.50}');
  await expect(field(page, 'Preview stages', 'Body bytes')).toHaveText('14');
  await expect(field(page, 'Preview stages', 'Delivery units')).toHaveText('1');
  await expect(field(page, 'Preview stages', 'Transform')).toHaveText('applied');
  await snap(page, testInfo, '1-delivered-bytes');

  await payload.fill('{"note": "no amount"}');
  await run.click();
  await expect(result.getByTestId('preview-reason')).toHaveText('transform_failed');
  await expect(result.getByTestId('preview-transform-error')).toContainText('total');
  await expect(result.getByTestId('preview-body')).toHaveCount(0);
  await snap(page, testInfo, '2-transform-error');

  await payload.fill('{"test": true, "amount": 1.50}');
  await run.click();
  await expect(result.getByTestId('preview-reason')).toHaveText('filter_not_matched');
  await expect(field(page, 'Preview stages', 'Filter')).toHaveText('not matched');
  await snap(page, testInfo, '3-filter-not-matched');

  await payload.fill('{"amount": 2}');
  await page.getByLabel('Event type').fill('shipment.sent');
  await run.click();
  await expect(result.getByTestId('preview-reason')).toHaveText('event_type_not_subscribed');
});

test('pause then enable an endpoint; deleting it removes it from the tenant list', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const tenant = await newTenant(api, 'life');
  const endpoint = await api.createEndpoint({
    tenant_id: tenant.id,
    url: 'http://127.0.0.1:9/hook',
    name: 'Short lived',
  });
  await open(page, `/endpoints/${endpoint.id}`);
  const status = page.getByTestId('endpoint-status');
  await expect(status).toHaveText('enabled');

  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(status).toHaveText('paused');
  await expect(page.getByRole('button', { name: 'Enable' })).toBeVisible();
  await snap(page, testInfo, '1-paused');
  await open(page, `/tenants/${tenant.id}/endpoints`);
  await expect(page.getByRole('row').filter({ hasText: 'Short lived' })).toContainText('paused');

  await page.getByRole('link', { name: 'Short lived' }).click();
  await page.getByRole('button', { name: 'Enable' }).click();
  await expect(status).toHaveText('enabled');
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();

  await page.getByRole('button', { name: 'Delete' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete endpoint' });
  await expect(confirm).toContainText('Short lived');
  await snap(page, testInfo, '2-confirm-delete');
  await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
  await expect(page).toHaveURL(new RegExp(`/tenants/${tenant.id}/endpoints$`));
  await expect(page.getByRole('table', { name: 'Endpoints' })).toContainText('No endpoints yet.');
  await expect(page.getByRole('link', { name: 'Short lived' })).toHaveCount(0);
  await snap(page, testInfo, '3-deleted');

  await open(page, `/endpoints/${endpoint.id}`);
  await expect(page.getByRole('alert', { name: 'Could not load this endpoint' })).toContainText('endpoint not found');
  await page.getByRole('link', { name: 'Start over' }).click();
  await expect(page).toHaveURL(/\/tenants$/);
});

test('edit: a new host needs the credentials again; clearing the filter removes it', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const tenant = await newTenant(api, 'edit');
  const endpoint = await api.createEndpoint(
    {
      tenant_id: tenant.id,
      url: 'https://receiver.example.com/v1?key=kept-query',
      name: 'Moving',
      headers: { 'X-Api-Key': 'old-header-value' },
      authorization: 'Bearer old-authorization',
    },
    { filter: '{"path": "/a", "op": "exists", "value": true}' },
  );
  await open(page, `/endpoints/${endpoint.id}`);
  await expect(field(page, 'Endpoint settings', 'URL')).toHaveText('https://receiver.example.com/v1?…');
  await page.getByRole('button', { name: 'Edit', exact: true }).click();
  const form = page.getByRole('dialog', { name: 'Edit endpoint Moving' });
  await expect(form.getByLabel('URL')).toHaveValue('https://receiver.example.com/v1?key=kept-query');
  await form.getByLabel('URL').fill('https://hooks.example.net/v2');
  await form.getByLabel('Filter').fill('');
  const save = form.getByRole('button', { name: 'Save' });
  await save.click();
  const authorization = form.getByTestId('authorization-field');
  await expect(authorization).toContainText('a URL with a new host needs authorization');
  await snap(page, testInfo, '1-authorization-needed');

  await authorization.getByText('Clear', { exact: true }).click();
  await save.click();
  const headers = form.getByTestId('headers-field');
  await expect(headers).toContainText('a URL with a new host needs headers');
  await headers.getByText('Replace', { exact: true }).click();
  await expect(form.getByLabel('Header key 1')).toHaveValue('x-api-key');
  await form.getByLabel('Header value 1').fill('new-header-value');
  await snap(page, testInfo, '2-credentials-given');
  await save.click();
  await expect(form).toBeHidden();

  await expect(field(page, 'Endpoint settings', 'URL')).toHaveText('https://hooks.example.net/v2');
  await expect(field(page, 'Endpoint settings', 'Authorization')).toHaveText('not set');
  await expect(field(page, 'Endpoint settings', 'Custom headers')).toHaveText('x-api-key');
  await expect(field(page, 'Endpoint health', 'URL revision')).toHaveText('2');
  await expect(page.getByTestId('endpoint-filter')).toHaveCount(0);
  await expect(page.getByText('none: every subscribed event is delivered')).toBeVisible();
  await snap(page, testInfo, '3-saved');
});

test('paging: more than 20 endpoints of a tenant spread over pages', async ({ signedIn: page, api }, testInfo) => {
  const tenant = await newTenant(api, 'many');
  for (let i = 0; i < 21; i++)
    await api.createEndpoint({
      tenant_id: tenant.id,
      url: `https://receiver.example.com/hook/${i}`,
      name: `Paged ${String(i).padStart(2, '0')}`,
    });
  await open(page, `/tenants/${tenant.id}/endpoints`);
  const rows = page.getByRole('table', { name: 'Endpoints' }).locator('tbody tr');
  await expect(rows).toHaveCount(20);
  await expect(rows.first()).toContainText('Paged 00');
  // Created without events: subscribed to every event type, said in words rather than a count of patterns.
  await expect(rows.first().locator('td').last()).toHaveText('all event types');
  await page.getByRole('link', { name: 'Next page' }).click();
  await expect(page).toHaveURL(/[?&]after=/);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('Paged 20');
  await snap(page, testInfo, 'page-two');
  await page.getByRole('link', { name: 'First page' }).click();
  await expect(rows).toHaveCount(20);
});
