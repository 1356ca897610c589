import type { Locator, Page } from '@playwright/test';
import { expect, open, type RestApi, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a message settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;

/** The value cell of a label/value row in a field table. */
function field(page: Page, table: string, label: string): Locator {
  return page.getByRole('table', { name: table }).locator(`tr:has(th:text-is("${label}")) td`);
}

async function setup(api: RestApi, prefix: string, receiverUrl: string) {
  const run = `${prefix}-${unique()}`;
  const tenantName = `Shop ${run}`;
  const tenant = await api.createTenant(run, tenantName);
  const eventType = `order.created${run.replace(/[^a-z0-9]/g, '')}`;
  await api.createEventType(eventType, 'An order was placed');
  const endpoint = await api.createEndpoint({ tenant_id: tenant.id, url: receiverUrl, name: `Orders ${run}` });
  return { run, tenant, tenantName, eventType, endpoint };
}

test('publish a message from the console and watch it reach a loopback receiver', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver();
  try {
    const { run, tenantName, eventType, endpoint } = await setup(api, 'pub', receiver.url);

    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Messages' }).click();
    await expect(page).toHaveURL(/\/messages$/);
    const form = page.getByRole('form', { name: 'Publish a message' });
    await form.getByRole('textbox', { name: 'Tenant' }).fill(tenantName);
    await page.getByRole('option', { name: `${tenantName} (${run})` }).click();
    await form.getByRole('textbox', { name: 'Event type' }).fill(eventType);
    await page.getByRole('option', { name: eventType, exact: true }).click();
    const payload = '{ "order" : 42, "total": 1.50e2, "note": "caf\\u00e9" }';
    await form.getByRole('textbox', { name: 'Payload' }).fill(payload);
    await form.getByRole('textbox', { name: 'External ID' }).fill(`order-42-${run}`);
    await snap(page, testInfo, '01-publish-form');
    await form.getByRole('button', { name: 'Publish message' }).click();

    // The message's page opens at once and follows the delivery.
    await expect(page).toHaveURL(/\/messages\/wdm_[0-9a-z]+$/);
    const messageId = page.url().split('/').pop()!;
    await expect(page.getByRole('heading', { name: eventType })).toBeVisible();
    await expect(page.getByTestId('resource-id').first()).toHaveText(messageId);
    await expect(field(page, 'Message fields', 'Tenant')).toContainText(tenantName);
    await expect(field(page, 'Message fields', 'Origin')).toHaveText('api');
    await expect(field(page, 'Message fields', 'External ID')).toHaveText(`order-42-${run}`);
    const minified = '{"order":42,"total":1.50e2,"note":"caf\\u00e9"}';
    await expect(field(page, 'Message fields', 'Body size')).toHaveText(`${Buffer.byteLength(minified)} bytes`);
    await expect(field(page, 'Message fields', 'Price')).toContainText('0.00006 USD');

    // Delivered by the worker: the page refreshes by itself until the status is final.
    await expect(page.getByTestId('message-status')).toHaveText('succeeded', { timeout: DELIVERY_TIMEOUT_MS });
    await expect(page.getByTestId('delivery-count-succeeded')).toHaveText('1');
    await expect(page.getByTestId('delivery-count-queued')).toHaveText('0');
    await expect(page.getByText('Every delivery of this message has finished.')).toBeVisible();
    await snap(page, testInfo, '02-message-succeeded');

    // The receiver got the exact bytes, signed, with the message ID as webhook-id.
    const delivered = receiver.received.find((r) => r.headers['webhook-id'] === messageId);
    expect(delivered, 'the receiver got the message').toBeDefined();
    expect(delivered!.body).toBe(minified);
    expect(delivered!.headers['svc-event-type']).toBe(eventType);
    expect(delivered!.headers['webhook-signature']).toMatch(/^v1,/);

    // Health shows the success on the endpoint page; nothing is left queued.
    await open(page, `/endpoints/${endpoint.id}`);
    await expect(field(page, 'Endpoint health', 'Last success')).toHaveText(/UTC$/);
    await expect(field(page, 'Endpoint health', 'Consecutive failures')).toHaveText('0');
    await expect(field(page, 'Endpoint health', 'Queued deliveries')).toHaveText('0');

    // The list shows it newest first, every column inside its card (the table once ran past the card's edge).
    await open(page, '/messages');
    const table = page.getByRole('table', { name: 'Messages' });
    await expect(table.locator(`tr[data-message-id="${messageId}"]`)).toContainText(`order-42-${run}`);
    const overrun = await table.evaluate(
      (element) =>
        element.getBoundingClientRect().right - element.closest('.mantine-Paper-root')!.getBoundingClientRect().right,
    );
    expect(overrun, 'pixels of the table past its card').toBeLessThanOrEqual(0);

    // Support opens the same message by its ID.
    await page.getByRole('textbox', { name: 'Message ID' }).fill(messageId);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/messages/${messageId}$`));
    await expect(page.getByTestId('message-status')).toHaveText('succeeded');
  } finally {
    await receiver.close();
  }
});

test('publish refusals are shown at their field; a message to a tenant without endpoints has no destinations', async ({
  signedIn: page,
  api,
}) => {
  const run = `lonely-${unique()}`;
  const tenantName = `Lonely ${run}`;
  await api.createTenant(run, tenantName);
  const eventType = `lonely.event${run.replace(/[^a-z0-9]/g, '')}`;
  await api.createEventType(eventType);

  await open(page, '/messages');
  const form = page.getByRole('form', { name: 'Publish a message' });
  await form.getByRole('textbox', { name: 'Payload' }).fill('{"a": 1,');
  await expect(form.getByRole('button', { name: 'Publish message' })).toBeDisabled();
  await form.getByRole('textbox', { name: 'Payload' }).fill('{"a": 1, "a": 2}');
  await form.getByRole('textbox', { name: 'Tenant' }).fill(tenantName);
  await page.getByRole('option', { name: `${tenantName} (${run})` }).click();
  await form.getByRole('textbox', { name: 'Event type' }).fill(eventType);
  await page.getByRole('option', { name: eventType, exact: true }).click();
  await form.getByRole('button', { name: 'Publish message' }).click();
  // The browser's JSON.parse accepts duplicate keys; the API does not.
  await expect(form.getByRole('textbox', { name: 'Payload' })).toHaveAccessibleDescription(
    /payload must be valid JSON/,
  );
  await expect(page).toHaveURL(/\/messages$/);

  await form.getByRole('textbox', { name: 'Payload' }).fill('null');
  await form.getByRole('button', { name: 'Publish message' }).click();
  await expect(page).toHaveURL(/\/messages\/wdm_[0-9a-z]+$/);
  await expect(page.getByTestId('message-status')).toHaveText('no_destinations');
  await expect(page.getByText('Every delivery of this message has finished.')).toBeVisible();
});

test('send a test message from the endpoint page: svc.test with {"test":true} reaches the receiver', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver();
  try {
    const { run, tenant, endpoint } = await setup(api, 'test', receiver.url);
    const paused = await api.createEndpoint({
      tenant_id: tenant.id,
      url: receiver.url,
      name: `Paused ${run}`,
      status: 'paused',
    });

    await open(page, `/endpoints/${endpoint.id}`);
    await page.getByRole('button', { name: 'Send test message' }).click();
    const dialog = page.getByRole('dialog', { name: `Send a test message to Orders ${run}` });
    await expect(dialog.getByRole('textbox', { name: 'Test payload' })).toHaveValue('{"test":true}');
    await dialog.getByRole('button', { name: 'Send test message' }).click();

    const result = dialog.getByTestId('test-message-result');
    await expect(result.getByTestId('resource-id')).toHaveText(/^wdm_[0-9a-z]+$/);
    const messageId = (await result.getByTestId('resource-id').textContent())!;
    await expect(result.getByTestId('message-status')).toHaveText('succeeded', { timeout: DELIVERY_TIMEOUT_MS });
    await expect(result.getByTestId('delivery-count-succeeded')).toHaveText('1');
    await expect(result).toContainText('Charged 0.00006 USD');
    await snap(page, testInfo, '01-test-message-succeeded');

    const delivered = receiver.received.find((r) => r.headers['webhook-id'] === messageId);
    expect(delivered, 'the receiver got the test message').toBeDefined();
    expect(delivered!.body).toBe('{"test":true}');
    expect(delivered!.headers['svc-event-type']).toBe('svc.test');

    // The page behind shows the success in the endpoint's health.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(field(page, 'Endpoint health', 'Last success')).toHaveText(/UTC$/);

    // The test message's own page: origin test.
    await open(page, `/messages/${messageId}`);
    await expect(field(page, 'Message fields', 'Origin')).toHaveText('test');
    await expect(field(page, 'Message fields', 'Event type')).toHaveText('svc.test');

    // A paused endpoint refuses tests: the button says so instead of sending.
    await open(page, `/endpoints/${paused.id}`);
    const refused = page.getByRole('button', { name: 'Send test message' });
    await expect(refused).toHaveAttribute('data-disabled', 'true');
    await refused.hover();
    await expect(page.getByRole('tooltip')).toHaveText('A paused endpoint refuses test messages: enable it first.');
  } finally {
    await receiver.close();
  }
});
