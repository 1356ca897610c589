import type { Locator, Page } from '@playwright/test';
import { expect, open, reload, type RestApi, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;

/** The value cell of a label/value row in a field table. */
function field(page: Page, table: string, label: string): Locator {
  return page.getByRole('table', { name: table }).locator(`tr:has(th:text-is("${label}")) td`);
}

/** A delivery's card on the message page. */
function deliveryCard(page: Page, generation: number): Locator {
  return page.locator(`section[data-testid="delivery"][data-generation="${generation}"]`);
}

async function setup(api: RestApi, prefix: string, receiverUrl: string) {
  const run = `${prefix}-${unique()}`;
  const tenantName = `Support ${run}`;
  const tenant = await api.createTenant(run, tenantName);
  const eventType = `invoice.paid${run.replace(/[^a-z0-9]/g, '')}`;
  await api.createEventType(eventType, 'An invoice was paid');
  const endpoint = await api.createEndpoint({ tenant_id: tenant.id, url: receiverUrl, name: `Billing ${run}` });
  return { run, tenant, tenantName, eventType, endpoint };
}

/** Picks a tenant by name in a filter form, then runs the search. */
async function findByTenant(page: Page, form: Locator, tenantName: string, run: string): Promise<void> {
  await form.getByRole('textbox', { name: 'Tenant' }).fill(tenantName);
  await page.getByRole('option', { name: `${tenantName} (${run})` }).click();
  await form.getByRole('button', { name: 'Find' }).click();
  await expect(page).toHaveURL(/tenant=wdt_/);
}

test('find a failed delivery in the dead letters, inspect its attempts, and replay it once the receiver is fixed', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(400);
  try {
    const { run, tenant, tenantName, eventType, endpoint } = await setup(api, 'dead', receiver.url);
    const message = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":7}');

    // 400 is not retried: the delivery fails on its first attempt and shows in the dead letters.
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Dead letters' }).click();
    await expect(page).toHaveURL(/\/dead-letters$/);
    await findByTenant(page, page.getByRole('form', { name: 'Find dead letters' }), tenantName, run);
    const row = page.getByRole('table', { name: 'Dead letters' }).locator(`tr[data-message-id="${message.id}"]`);
    await expect(async () => {
      await reload(page);
      await expect(row).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(row.getByTestId('delivery-status')).toHaveText('failed');
    await expect(row).toContainText('400');
    await expect(row).toContainText(`Billing ${run}`);
    const deliveryId = (await row.getAttribute('data-delivery-id'))!;
    expect(deliveryId).toMatch(/^wdd_/);
    await snap(page, testInfo, '01-dead-letters');

    // Its message page: the delivery with its one attempt, answered 400.
    await row.getByRole('link', { name: `Open the message of ${deliveryId}` }).click();
    await expect(page).toHaveURL(new RegExp(`/messages/${message.id}$`));
    await page.waitForLoadState('networkidle');
    await expect(page.getByTestId('message-status')).toHaveText('failed');
    const original = deliveryCard(page, 0);
    await expect(original.getByTestId('delivery-status')).toHaveText('failed');
    await expect(original.getByTestId('attempt')).toHaveCount(1);
    await expect(original.getByTestId('attempt-answer')).toHaveText('HTTP 400');
    await expect(original).toContainText('Attempt 1');
    await expect(original).toContainText('first attempt');
    await expect(page.getByTestId('content-pretty')).toHaveText('{\n  "invoice": 7\n}');
    await snap(page, testInfo, '02-failed-attempt');

    // The receiver is fixed; a finished delivery cannot be retried, only replayed, at the price shown first.
    receiver.answerWith(204);
    await expect(original.getByRole('button', { name: 'Retry now' })).toHaveCount(0);
    await original.getByRole('button', { name: `Replay ${deliveryId}` }).click();
    const dialog = page.getByRole('dialog', { name: `Replay delivery ${deliveryId}` });
    await expect(dialog.getByRole('radio', { name: /Frozen \(default\)/ })).toBeChecked();
    await expect(dialog.getByTestId('replay-price')).toHaveText(
      /^Replaying 1 delivery costs 0\.\d+ USD \(1 delivery unit\)\.$/,
    );
    const price = /costs (\S+) USD/.exec((await dialog.getByTestId('replay-price').textContent())!)![1]!;
    await snap(page, testInfo, '03-replay-quote');
    await dialog.getByRole('button', { name: `Replay 1 delivery for ${price} USD` }).click();
    await expect(dialog.getByTestId('replay-outcomes')).toContainText('1 replay queued');
    await expect(dialog.getByTestId('replay-outcomes')).toContainText('generation 1');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // The new generation appears and succeeds while the page follows it (no reload).
    const replay = deliveryCard(page, 1);
    await expect(replay).toContainText('Replay, generation 1');
    await expect(replay).toContainText(`replays ${deliveryId}`);
    await expect(replay.getByTestId('delivery-status')).toHaveText('succeeded', { timeout: DELIVERY_TIMEOUT_MS });
    await expect(replay.getByTestId('attempt-answer')).toHaveText('HTTP 204');
    await expect(page.getByText('Every delivery of this message has finished.')).toBeVisible();
    // Replays never change the message's status, which the original deliveries decide; "repaired 1" says one of
    // its failures was made good, and the original names the replay that repaired it.
    await expect(page.getByTestId('message-status')).toHaveText('failed');
    await expect(page.getByTestId('message-repaired')).toHaveText('repaired 1');
    const replayId = (await replay.getByTestId('resource-id').textContent())!;
    expect(replayId).toMatch(/^wdd_/);
    await expect(original.getByTestId('delivery-repaired')).toHaveText(`repaired by ${replayId}`);
    await expect(replay.getByTestId('delivery-repaired')).toHaveCount(0);
    await snap(page, testInfo, '04-replay-succeeded');
    const sent = receiver.received.filter((request) => request.headers['webhook-id'] === message.id);
    expect(sent.map((request) => request.body)).toEqual(['{"invoice":7}', '{"invoice":7}']);

    // The messages list shows the same beside the status.
    await open(page, `/messages?tenant=${tenant.id}`);
    const listed = page.getByRole('table', { name: 'Messages' }).locator(`tr[data-message-id="${message.id}"]`);
    await expect(listed.getByTestId('message-status')).toHaveText('failed');
    await expect(listed.getByTestId('message-repaired')).toHaveText('repaired 1');

    // The dead letters hide it by default; without "Hide repaired" it is listed, marked, and links to its replay.
    await open(page, `/dead-letters?tenant=${tenant.id}`);
    const hide = page.getByRole('switch', { name: 'Hide repaired' });
    await expect(hide).toBeChecked();
    await expect(page.getByRole('table', { name: 'Dead letters' })).toContainText(
      'No failed delivery still to repair matches the filters.',
    );
    await expect(row).toHaveCount(0);
    await hide.click();
    await expect(page).toHaveURL(/repaired=show/);
    await expect(row.getByTestId('delivery-repaired')).toContainText('repaired');
    await snap(page, testInfo, '05-repaired-dead-letter');
    await row.getByRole('link', { name: `Repaired by ${replayId}` }).click();
    await expect(page).toHaveURL(new RegExp(`/messages/${message.id}#${replayId}$`));
    await expect(deliveryCard(page, 1).getByTestId('delivery-status')).toHaveText('succeeded');

    // The endpoint page lists both generations among its recent deliveries.
    await open(page, `/endpoints/${endpoint.id}`);
    const recent = page.getByRole('table', { name: 'Recent deliveries' });
    await expect(recent.locator(`tr[data-delivery-id="${deliveryId}"]`).getByTestId('delivery-status')).toHaveText(
      'failed',
    );
    await expect(recent.locator(`tr[data-message-id="${message.id}"]`)).toHaveCount(2);
    await expect(
      recent
        .locator(`tr[data-message-id="${message.id}"]`)
        .filter({ hasText: '1 (replay)' })
        .getByTestId('delivery-status'),
    ).toHaveText('succeeded');

    // The events feed has the failure, found by the delivery's ID.
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Events' }).click();
    const events = page.getByRole('form', { name: 'Find events' });
    await events.getByRole('textbox', { name: 'Resource ID' }).fill(deliveryId);
    await events.getByRole('button', { name: 'Find' }).click();
    await expect(page).toHaveURL(new RegExp(`resource=${deliveryId}`));
    const event = page.getByRole('table', { name: 'Operational events' }).locator('tbody tr').first();
    await expect(event).toContainText('webhooks.delivery.failed');
    await expect(event.getByTestId('event-data')).toContainText(`delivery_id: ${deliveryId}`);
    await expect(event.getByTestId('event-data')).toContainText('last_status_code: 400');
    await expect(event.getByTestId('event-data').getByRole('link', { name: message.id })).toBeVisible();
    await snap(page, testInfo, '06-event');
  } finally {
    await receiver.close();
  }
});

test('cancel a scheduled message from its page: its deliveries are canceled and nothing is sent', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver();
  try {
    const { tenant, eventType } = await setup(api, 'cancel', receiver.url);
    const deliverAt = new Date(Date.now() + 3_600_000).toISOString();
    const message = await api.publishMessage(
      { tenant_id: tenant.id, event_type: eventType, deliver_at: deliverAt },
      '{"invoice":8}',
    );

    await open(page, `/messages/${message.id}`);
    await expect(page.getByTestId('message-status')).toHaveText('scheduled');
    await expect(deliveryCard(page, 0).getByTestId('delivery-status')).toHaveText('scheduled');
    await page.getByRole('button', { name: 'Cancel message' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel message' });
    await expect(dialog).toContainText(
      'Its original deliveries not sent yet (1: scheduled, queued or waiting for a retry) are canceled now',
    );
    await expect(dialog).toContainText('An attempt already in flight (0) finishes');
    await expect(dialog).toContainText('Nothing is refunded');
    await expect(dialog).toContainText('This cannot be undone.');
    await snap(page, testInfo, '01-cancel-confirmation');
    await dialog.getByRole('button', { name: 'Cancel message' }).click();

    const result = dialog.getByTestId('cancel-result');
    await expect(result).toContainText('Canceled now: 1');
    await expect(result).toContainText('In flight (the attempt finishes, no retries follow): 0');
    await expect(result).toContainText('Already finished, left as they were: 0');
    await snap(page, testInfo, '02-cancel-result');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await expect(page.getByTestId('message-status')).toHaveText('canceled');
    await expect(deliveryCard(page, 0).getByTestId('delivery-status')).toHaveText('canceled');
    await expect(page.getByTestId('delivery-count-canceled')).toHaveText('1');
    await expect(page.getByTestId('delivery-count-scheduled')).toHaveText('0');
    await expect(page.getByText('Every delivery of this message has finished.')).toBeVisible();
    // Nothing left to cancel: the button says why instead.
    await expect(page.getByRole('button', { name: 'Cancel message' })).toHaveAttribute('data-disabled', 'true');
    expect(receiver.received).toEqual([]);
  } finally {
    await receiver.close();
  }
});

test('redact a message: its content is gone for good, its fields stay', async ({ signedIn: page, api }, testInfo) => {
  const receiver = await startReceiver();
  try {
    const { tenant, eventType } = await setup(api, 'redact', receiver.url);
    const message = await api.publishMessage(
      { tenant_id: tenant.id, event_type: eventType },
      '{ "invoice": 9, "total": 1.50e2, "note": "caf\\u00e9", "lines": [] }',
    );

    await open(page, `/messages/${message.id}`);
    await expect(page.getByTestId('message-status')).toHaveText('succeeded', { timeout: DELIVERY_TIMEOUT_MS });
    // Pretty-printed without touching a value; the exact bytes as accepted (whitespace outside strings removed).
    await expect(page.getByTestId('content-pretty')).toHaveText(
      '{\n  "invoice": 9,\n  "total": 1.50e2,\n  "note": "caf\\u00e9",\n  "lines": []\n}',
    );
    await page.getByRole('tab', { name: 'Exact bytes' }).click();
    await expect(page.getByTestId('content-exact')).toHaveText(
      '{"invoice":9,"total":1.50e2,"note":"caf\\u00e9","lines":[]}',
    );
    await snap(page, testInfo, '01-content');

    await page.getByRole('button', { name: 'Redact message' }).click();
    const dialog = page.getByRole('dialog', { name: 'Redact message' });
    await expect(dialog).toContainText('irreversibly');
    await expect(dialog).toContainText('every transformed copy');
    await expect(dialog).toContainText('replays included');
    await expect(dialog).toContainText('metadata, delivery records and charges stay');
    await dialog.getByRole('button', { name: 'Redact message' }).click();
    await expect(dialog.getByTestId('redact-status')).toHaveText('redacting');
    await snap(page, testInfo, '02-redacted');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await expect(page.getByTestId('content-gone')).toContainText('Content is gone (payload expired)');
    await expect(page.getByTestId('content-gone')).toContainText('redacted');
    await expect(page.getByTestId('content-pretty')).toHaveCount(0);
    await expect(field(page, 'Message fields', 'Redacted')).toHaveText('yes');
    await expect(field(page, 'Message fields', 'Content available')).toHaveText('no');
    // The retention sweep (every 5 minutes) may complete the redaction while the test runs.
    await expect(field(page, 'Message fields', 'Redaction status')).toHaveText(/^(redacting|complete)$/);
    await expect(page.getByTestId('redaction-status')).toHaveText(/^redaction (redacting|complete)$/);
    // The fields and the delivery stay.
    await expect(field(page, 'Message fields', 'Event type')).toHaveText(eventType);
    await expect(deliveryCard(page, 0).getByTestId('delivery-status')).toHaveText('succeeded');
    await expect(page.getByRole('button', { name: 'Redact message' })).toHaveAttribute('data-disabled', 'true');
    await snap(page, testInfo, '03-content-gone');

    // A reload reads the same from the API.
    await reload(page);
    await expect(page.getByTestId('content-gone')).toBeVisible();
  } finally {
    await receiver.close();
  }
});

test('replay a selection of dead letters: the quote names what cannot be replayed and prices the rest', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(400);
  try {
    const { run, tenant, tenantName, eventType } = await setup(api, 'bulk', receiver.url);
    const kept = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":10}');
    const redacted = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":11}');

    await open(page, '/dead-letters');
    await findByTenant(page, page.getByRole('form', { name: 'Find dead letters' }), tenantName, run);
    const table = page.getByRole('table', { name: 'Dead letters' });
    await expect(async () => {
      await reload(page);
      await expect(table.locator('tbody tr[data-delivery-id]')).toHaveCount(2, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    const redactedId = (await table.locator(`tr[data-message-id="${redacted.id}"]`).getAttribute('data-delivery-id'))!;
    const keptId = (await table.locator(`tr[data-message-id="${kept.id}"]`).getAttribute('data-delivery-id'))!;

    // Redacting one message leaves nothing to replay for it.
    await open(page, `/messages/${redacted.id}`);
    await page.getByRole('button', { name: 'Redact message' }).click();
    await page.getByRole('dialog', { name: 'Redact message' }).getByRole('button', { name: 'Redact message' }).click();
    await expect(page.getByTestId('redact-status')).toHaveText('redacting');
    await page.goBack();
    await page.waitForLoadState('networkidle');

    receiver.answerWith(204);
    await table.getByRole('checkbox', { name: 'Select every delivery on this page' }).check();
    await page.getByRole('button', { name: 'Replay selected (2)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay 2 deliveries' });
    await expect(dialog.getByTestId('replay-price')).toHaveText(/^Replaying 1 delivery costs 0\.\d+ USD/);
    await expect(dialog.getByTestId('replay-refusals')).toContainText(redactedId);
    await expect(dialog.getByTestId('replay-refusals')).toContainText('payload_expired');
    await expect(dialog.getByTestId('replay-refusals')).not.toContainText(keptId);
    await snap(page, testInfo, '01-bulk-quote');
    await dialog.getByRole('button', { name: /^Replay 1 delivery for 0\.\d+ USD$/ }).click();
    await expect(dialog.getByTestId('replay-outcomes')).toContainText('1 replay queued');
    await expect(dialog.getByTestId('replay-outcomes')).toContainText(`replays ${keptId}`);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // The replay reaches the fixed receiver.
    await open(page, `/messages/${kept.id}`);
    await expect(deliveryCard(page, 1).getByTestId('delivery-status')).toHaveText('succeeded', {
      timeout: DELIVERY_TIMEOUT_MS,
    });
    expect(receiver.received.filter((request) => request.headers['webhook-id'] === kept.id)).toHaveLength(2);
    expect(receiver.received.filter((request) => request.headers['webhook-id'] === redacted.id)).toHaveLength(1);

    // Repaired now: hidden from the dead letters by default, and left out of "Replay selected" when shown.
    await open(page, `/dead-letters?tenant=${tenant.id}`);
    await expect(table.locator('tbody tr[data-delivery-id]')).toHaveCount(1);
    await expect(table.locator(`tr[data-delivery-id="${redactedId}"]`)).toBeVisible();
    await page.getByRole('switch', { name: 'Hide repaired' }).click();
    await expect(page).toHaveURL(/repaired=show/);
    await expect(table.locator('tbody tr[data-delivery-id]')).toHaveCount(2);
    await expect(table.locator(`tr[data-delivery-id="${keptId}"]`).getByTestId('delivery-repaired')).toBeVisible();
    await expect(table.locator(`tr[data-delivery-id="${redactedId}"]`).getByTestId('delivery-repaired')).toHaveCount(0);
    await table.getByRole('checkbox', { name: 'Select every delivery on this page' }).check();
    await page.getByRole('button', { name: 'Replay selected (2)' }).click();
    const again = page.getByRole('dialog', { name: 'Replay 2 deliveries' });
    await expect(again.getByTestId('replay-repaired')).toContainText(keptId);
    await expect(again.getByTestId('replay-refusals')).toContainText(redactedId);
    await expect(again.getByTestId('replay-price')).toHaveText(
      'Every delivery in this selection that can be replayed is already repaired.',
    );
    await expect(again.getByRole('button', { name: 'Replay', exact: true })).toBeDisabled();
    await snap(page, testInfo, '02-repaired-left-out');
    // Asked for, it is priced (and would be charged) again.
    await again.getByRole('checkbox', { name: 'Replay the repaired ones too (charged again)' }).check();
    await expect(again.getByTestId('replay-price')).toHaveText(/^Replaying 1 delivery costs 0\.\d+ USD/);
    await expect(again.getByRole('button', { name: /^Replay 1 delivery for 0\.\d+ USD$/ })).toBeEnabled();
    await again.getByRole('button', { name: 'Cancel' }).click();
    expect(receiver.received.filter((request) => request.headers['webhook-id'] === kept.id)).toHaveLength(2);
  } finally {
    await receiver.close();
  }
});

test('messages search: filters by tenant, status and external ID, and each row opens its message', async ({
  signedIn: page,
  api,
}) => {
  const receiver = await startReceiver();
  try {
    const { run, tenant, tenantName, eventType } = await setup(api, 'search', receiver.url);
    const first = await api.publishMessage(
      { tenant_id: tenant.id, event_type: eventType, external_id: `inv-1-${run}` },
      '{"invoice":1}',
    );
    const scheduled = await api.publishMessage(
      {
        tenant_id: tenant.id,
        event_type: eventType,
        external_id: `inv-2-${run}`,
        deliver_at: new Date(Date.now() + 3_600_000).toISOString(),
      },
      '{"invoice":2}',
    );

    await open(page, '/messages');
    const form = page.getByRole('form', { name: 'Find messages' });
    await findByTenant(page, form, tenantName, run);
    const table = page.getByRole('table', { name: 'Messages' });
    await expect(table.locator('tbody tr[data-message-id]')).toHaveCount(2);

    await form.getByRole('textbox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'scheduled', exact: true }).click();
    await form.getByRole('button', { name: 'Find' }).click();
    await expect(page).toHaveURL(/status=scheduled/);
    await expect(table.locator('tbody tr[data-message-id]')).toHaveCount(1);
    await expect(table.locator(`tr[data-message-id="${scheduled.id}"]`)).toBeVisible();
    await expect(page.getByText('The status filter is applied to each page after it is read')).toBeVisible();

    await page.getByRole('link', { name: 'Clear filters' }).click();
    // The form starts again from the URL's (now empty) filters.
    await expect(page).toHaveURL(/\/messages$/);
    await expect(form.getByRole('textbox', { name: 'Tenant' })).toHaveValue('');
    await form.getByRole('textbox', { name: 'External ID' }).fill(`inv-1-${run}`);
    await form.getByRole('button', { name: 'Find' }).click();
    await expect(table.locator('tbody tr[data-message-id]')).toHaveCount(1);
    await table.getByRole('link', { name: first.id }).click();
    await expect(page).toHaveURL(new RegExp(`/messages/${first.id}$`));
    await expect(field(page, 'Message fields', 'External ID')).toHaveText(`inv-1-${run}`);

    // A window the API refuses is explained at its field.
    await open(page, '/messages?createdAfter=2020-01-01T00:00&createdBefore=2020-03-01T00:00');
    await expect(page.getByLabel('Created after (UTC)')).toHaveAccessibleDescription(/30 days/);
  } finally {
    await receiver.close();
  }
});

test('retry now sends a delivery waiting for its retry at once; binary content shows as base64 and hex', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(503);
  try {
    const run = `retry-${unique()}`;
    const tenant = await api.createTenant(run, `Support ${run}`);
    const eventType = `file.uploaded${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType);
    // One retry, an hour later: the delivery waits in retry_wait until someone retries it now.
    await api.createEndpoint({
      tenant_id: tenant.id,
      url: receiver.url,
      name: `Files ${run}`,
      retry_delays_seconds: [3600],
    });
    const message = await api.publishMessage({
      tenant_id: tenant.id,
      event_type: eventType,
      body_base64: '/wABAgM=',
      content_type: 'application/octet-stream',
    });

    await open(page, `/messages/${message.id}`);
    const original = deliveryCard(page, 0);
    await expect(original.getByTestId('delivery-status')).toHaveText('retry_wait', { timeout: DELIVERY_TIMEOUT_MS });
    await expect(original.getByTestId('attempt-answer')).toHaveText('HTTP 503');
    await expect(page.getByTestId('message-status')).toHaveText('delivering');

    // Not UTF-8: the exact bytes are shown encoded, and labelled binary.
    await expect(page.getByRole('tab', { name: 'Pretty-printed JSON' })).toHaveCount(0);
    await expect(page.getByTestId('content-binary')).toHaveText('binary');
    await expect(page.getByTestId('content-exact')).toHaveText('/wABAgM=');
    await page.getByText('Hex', { exact: true }).click();
    await expect(page.getByTestId('content-exact')).toHaveText('ff 00 01 02 03');
    await snap(page, testInfo, '01-retry-wait-binary');

    receiver.answerWith(204);
    await expect(original.getByRole('button', { name: /^Replay/ })).toHaveCount(0);
    await original.getByRole('button', { name: 'Retry now' }).click();
    await expect(page.getByText(/Attempt 2 of wdd_\w+ goes out now \(free\)/)).toBeVisible();
    await expect(original.getByTestId('delivery-status')).toHaveText('succeeded', { timeout: DELIVERY_TIMEOUT_MS });
    await expect(original.getByTestId('attempt')).toHaveCount(2);
    await expect(original.getByTestId('attempt').nth(1)).toContainText('retry now');
    await expect(original.getByTestId('attempt-answer').nth(1)).toHaveText('HTTP 204');
    await expect(page.getByTestId('message-status')).toHaveText('succeeded');
    await snap(page, testInfo, '02-retried');
    const sent = receiver.received.filter((request) => request.headers['webhook-id'] === message.id);
    expect(sent).toHaveLength(2);
  } finally {
    await receiver.close();
  }
});

test('the events feed folds a burst of one endpoint’s failures into one event, and "load newer" shows it grow', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(400);
  try {
    const { tenant, eventType } = await setup(api, 'burst', receiver.url);
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":20}');

    await open(page, `/events?tenant=${tenant.id}`);
    const rows = page.getByRole('table', { name: 'Operational events' }).locator('tbody tr[data-event-id]');
    await expect(async () => {
      await reload(page);
      await expect(rows).toHaveCount(1, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(rows.first()).toContainText('webhooks.delivery.failed');
    await expect(rows.first().getByTestId('event-count')).toHaveText('1');

    // A second failure of the same endpoint within a minute folds into the same event.
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":21}');
    await expect(async () => {
      await page.getByRole('button', { name: 'Load newer' }).click();
      await expect(rows.first().getByTestId('event-count')).toHaveText('2 (coalesced)', { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(rows).toHaveCount(1);
    const first = (await rows
      .first()
      .getByText(/^first wdd_/)
      .textContent())!.replace('first ', '');
    const last = (await rows
      .first()
      .getByText(/^last wdd_/)
      .textContent())!.replace('last ', '');
    expect(last).not.toBe(first);
    await expect(rows.first().getByTestId('event-data')).toContainText(`delivery_id: ${first}`);
    await snap(page, testInfo, '01-coalesced');

    // Nothing newer: the feed says so and keeps its place.
    await page.getByRole('button', { name: 'Load newer' }).click();
    await expect(page.getByText('Nothing newer yet.')).toBeVisible();
    await expect(rows).toHaveCount(1);
  } finally {
    await receiver.close();
  }
});

test('the support lists read newest first: messages and dead letters page on from the newest, events list the latest on top', async ({
  signedIn: page,
  api,
}, testInfo) => {
  test.setTimeout(120_000);
  const receiver = await startReceiver(400);
  try {
    const run = `newest-${unique()}`;
    const eventType = `order.placed${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType);

    // One more message than a page (50), to a tenant without endpoints: the oldest lands alone on page 2.
    const quiet = await api.createTenant(`${run}-q`, `Quiet ${run}`);
    const published: string[] = [];
    for (let order = 1; order <= 51; order++)
      published.push((await api.publishMessage({ tenant_id: quiet.id, event_type: eventType }, `{"n":${order}}`)).id);
    await open(page, `/messages?tenant=${quiet.id}`);
    const messages = page.getByRole('table', { name: 'Messages' }).locator('tbody tr[data-message-id]');
    await expect(messages).toHaveCount(50);
    await expect(messages.first()).toHaveAttribute('data-message-id', published[50]!);
    await expect(messages.nth(1)).toHaveAttribute('data-message-id', published[49]!);
    await expect(page.locator(`tr[data-message-id="${published[0]!}"]`)).toHaveCount(0);
    await snap(page, testInfo, '01-messages-newest-first');
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect(page).toHaveURL(/after=/);
    await expect(messages).toHaveCount(1);
    await expect(messages.first()).toHaveAttribute('data-message-id', published[0]!);

    // 9 messages to 6 failing endpoints: 54 dead letters, and no endpoint fails the 10 times that open its circuit.
    const busy = await api.createTenant(`${run}-b`, `Busy ${run}`);
    for (let n = 1; n <= 6; n++)
      await api.createEndpoint({ tenant_id: busy.id, url: receiver.url, name: `Sink ${n} ${run}` });
    const failed: string[] = [];
    for (let order = 1; order <= 9; order++)
      failed.push((await api.publishMessage({ tenant_id: busy.id, event_type: eventType }, `{"n":${order}}`)).id);
    await open(page, `/dead-letters?tenant=${busy.id}`);
    const dead = page.getByRole('table', { name: 'Dead letters' }).locator('tbody tr[data-delivery-id]');
    await expect(async () => {
      await reload(page);
      await expect(dead).toHaveCount(50, { timeout: 1_000 });
      await expect(page.getByRole('link', { name: 'Next page' })).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 60_000 });
    await expect(dead.first()).toHaveAttribute('data-message-id', failed[8]!);
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect(page).toHaveURL(/after=/);
    await expect(dead).toHaveCount(4);
    for (const row of await dead.all()) await expect(row).toHaveAttribute('data-message-id', failed[0]!);

    // Events: a failure of a second endpoint, after the first one's, is listed above it.
    const pair = await api.createTenant(`${run}-e`, `Pair ${run}`);
    const [firstType, laterType] = [`${eventType}a`, `${eventType}b`];
    await api.createEventType(firstType);
    await api.createEventType(laterType);
    const first = await api.createEndpoint({
      tenant_id: pair.id,
      url: receiver.url,
      name: `A ${run}`,
      events: [firstType],
    });
    const later = await api.createEndpoint({
      tenant_id: pair.id,
      url: receiver.url,
      name: `B ${run}`,
      events: [laterType],
    });
    await api.publishMessage({ tenant_id: pair.id, event_type: firstType }, '{"n":1}');
    await open(page, `/events?tenant=${pair.id}`);
    const events = page.getByRole('table', { name: 'Operational events' }).locator('tbody tr[data-event-id]');
    await expect(async () => {
      await reload(page);
      await expect(events).toHaveCount(1, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await api.publishMessage({ tenant_id: pair.id, event_type: laterType }, '{"n":2}');
    await expect(async () => {
      await reload(page);
      await expect(events).toHaveCount(2, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(events.first().getByTestId('event-data')).toContainText(`endpoint_id: ${later.id}`);
    await expect(events.nth(1).getByTestId('event-data')).toContainText(`endpoint_id: ${first.id}`);
    await expect(page.getByTestId('events-summary')).toHaveText('2 shown, newest first; nothing older in the 30 days.');
    await expect(page.getByRole('button', { name: 'Load older' })).toBeDisabled();
    await snap(page, testInfo, '02-events-newest-first');
  } finally {
    await receiver.close();
  }
});
