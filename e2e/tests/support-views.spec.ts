import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from '@playwright/test';
import { expect, open, reload, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/**
 * Support's questions (issue 28): where did a delivery go, which failures are still open, how did a replay end, which
 * number did an ordered delivery have; and the portal's messages, searched and opened with payload and endpoint.
 */
const DELIVERY_TIMEOUT_MS = 20_000;
/** Replay batches run as jobs and the completion check follows every 5 s. */
const REPLAY_TIMEOUT_MS = 45_000;
const DOCS_IMAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/images');
const UTC_MINUTE = /\d{4}-\d\d-\d\d \d\d:\d\d UTC/;

/** DOCS_SCREENSHOTS=1 writes the screenshots docs/console.md and docs/portal.md show (docs/images/). */
async function docsShot(target: Page | Locator, name: string): Promise<void> {
  if (process.env['DOCS_SCREENSHOTS'] !== '1') return;
  await target.screenshot({ path: path.join(DOCS_IMAGES, `${name}.png`) });
}

/** Whether an element's text sits on one line (its height is at most one and a half of its line height). */
async function oneLine(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    const lineHeight = parseFloat(getComputedStyle(element).lineHeight);
    return element.getBoundingClientRect().height <= lineHeight * 1.5;
  });
}

test('delivery cards name the endpoint, the URL the attempt went to and the ordered sequence', async ({
  signedIn: page,
  api,
}) => {
  test.setTimeout(90_000);
  const receiver = await startReceiver(204);
  try {
    const run = unique();
    const tenant = await api.createTenant(`cards-${run}`, `Cards ${run}`);
    const eventType = `invoice.sent${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType);
    const endpoint = await api.createEndpoint({
      tenant_id: tenant.id,
      url: receiver.url,
      name: `Billing ${run}`,
      ordering: 'ordered',
    });
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":1}');
    const second = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":2}');
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(2);
    // The URL changes after the delivery: the card keeps the URL its attempt went to.
    await api.patch(`/endpoints/${endpoint.id}`, { url: `${receiver.url}/v2` });

    await open(page, `/messages/${second.id}`);
    const card = page.getByTestId('delivery').first();
    await expect(card.getByTestId('delivery-status')).toHaveText('succeeded', { timeout: DELIVERY_TIMEOUT_MS });
    await expect(card.getByTestId('delivery-target')).toContainText(`To Billing ${run} at ${receiver.url}`);
    await expect(card.getByTestId('delivery-url')).toHaveText(receiver.url);
    await expect(card.getByTestId('delivery-url-revision')).toHaveText('(URL revision 1)');
    await expect(card.getByTestId('delivery-sequence')).toHaveText('sequence 2');
    await expect(card.getByRole('link', { name: `Billing ${run}` })).toHaveAttribute(
      'href',
      `/endpoints/${endpoint.id}`,
    );
    await docsShot(card, 'console-delivery-card');

    // A message published after the change goes to the new URL, revision 2.
    const third = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"invoice":3}');
    await open(page, `/messages/${third.id}`);
    const next = page.getByTestId('delivery').first();
    await expect(next.getByTestId('delivery-url')).toHaveText(`${receiver.url}/v2`);
    await expect(next.getByTestId('delivery-url-revision')).toHaveText('(URL revision 2)');
    await expect(next.getByTestId('delivery-sequence')).toHaveText('sequence 3');
  } finally {
    await receiver.close();
  }
});

test('dead letters list a failure and its failed replay as one row, and find an ordered one by its sequence', async ({
  signedIn: page,
  api,
}) => {
  test.setTimeout(90_000);
  const receiver = await startReceiver(400);
  try {
    const run = unique();
    const tenant = await api.createTenant(`dead-${run}`, `Dead ${run}`);
    const eventType = `invoice.sent${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType);
    const endpoint = await api.createEndpoint({
      tenant_id: tenant.id,
      url: receiver.url,
      name: `Ledger ${run}`,
      ordering: 'ordered',
    });
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"n":1}');
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"n":2}');
    const table = page.getByRole('table', { name: 'Dead letters' });
    const rows = table.locator('tbody tr[data-delivery-id]');
    await open(page, `/dead-letters?endpoint=${endpoint.id}`);
    await expect(async () => {
      await reload(page);
      await expect(rows).toHaveCount(2, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });

    // The first (sequence 1) is replayed and fails again: still one row, the replay, with the original beneath it.
    const first = rows.filter({ hasText: 'sequence 1' });
    const original = (await first.getAttribute('data-delivery-id'))!;
    const replay = await api.post<{ id: string }>(`/deliveries/${original}/replay`, {});
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(3);
    await expect(async () => {
      await reload(page);
      await expect(table.locator(`tr[data-delivery-id="${replay.id}"]`)).toHaveCount(1, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(rows).toHaveCount(2);
    await expect(table.locator(`tr[data-delivery-id="${original}"]`)).toHaveCount(0);
    const replayRow = table.locator(`tr[data-delivery-id="${replay.id}"]`);
    await expect(replayRow.getByTestId('earlier-generation')).toHaveCount(1);
    await expect(replayRow.getByTestId('earlier-generation')).toHaveAttribute('data-delivery-id', original);
    await expect(replayRow.getByTestId('earlier-generation')).toContainText('original · failed (400)');
    await expect(replayRow).toContainText('sequence 3');
    await expect(replayRow.getByTestId('delivery-url')).toHaveText(receiver.url);

    // Found by its number: the filter sends sequence with the endpoint.
    await page.getByLabel('Sequence').fill('2');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect(page).toHaveURL(/sequence=2/);
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText('sequence 2');
    // A number that is not one is refused at the field.
    await page.getByLabel('Sequence').fill('0');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect(page.getByText('must be a positive whole number')).toBeVisible();
  } finally {
    await receiver.close();
  }
});

test('a replay whose deliveries all failed says completed with failures, in red, not a green completed', async ({
  signedIn: page,
  api,
}) => {
  test.setTimeout(120_000);
  const receiver = await startReceiver(400);
  try {
    const run = unique();
    const tenant = await api.createTenant(`outcome-${run}`, `Outcome ${run}`);
    const eventType = `invoice.sent${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType);
    const endpoint = await api.createEndpoint({ tenant_id: tenant.id, url: receiver.url, name: `Still down ${run}` });
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"n":1}');
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"n":2}');
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(2);
    // The receiver is still down: the replay delivers nothing.
    const replay = await api.post<{ id: string }>('/replays', { endpoint_id: endpoint.id });
    await open(page, `/replays/${replay.id}`);
    const badge = page.getByTestId('replay-status');
    await expect(badge).toHaveText('completed with failures', { timeout: REPLAY_TIMEOUT_MS });
    await expect(badge).toHaveAttribute('data-outcome', 'all_failed');
    await expect(page.getByTestId('replay-delivered')).toHaveText('0 succeeded, 2 failed, 0 pending of 2');
    await expect(page.getByTestId('replay-state')).toHaveText('The replay has finished (completed with failures).');
    await open(page, `/replays?endpoint=${endpoint.id}`);
    const row = page.getByRole('table', { name: 'Replays' }).locator(`tr[data-replay-id="${replay.id}"]`);
    await expect(row.getByTestId('replay-status')).toHaveText('completed with failures');

    // The events page's time column stays on one line beside the events this outage made.
    await open(page, '/events');
    const time = page.getByTestId('event-time').first();
    await expect(time).toHaveText(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await oneLine(time)).toBe(true);
  } finally {
    await receiver.close();
  }
});

test('the portal searches messages and opens one with its payload and where each delivery went', async ({
  signedIn: page,
  api,
  context,
}) => {
  test.setTimeout(120_000);
  const receiver = await startReceiver(204);
  try {
    const run = unique();
    const tenant = await api.createTenant(`search-${run}`, `Search ${run}`);
    const created = `order.created${run.replace(/[^a-z0-9]/g, '')}`;
    const paid = `order.paid${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(created);
    await api.createEventType(paid);
    await api.createEndpoint({ tenant_id: tenant.id, url: receiver.url, name: `Shop ${run}`, ordering: 'ordered' });
    const one = await api.publishMessage(
      { tenant_id: tenant.id, event_type: created, external_id: `ord-${run}` },
      '{"order":"A-1","total":12.50}',
    );
    const two = await api.publishMessage(
      { tenant_id: tenant.id, event_type: paid, external_id: `ord-${run}` },
      '{"order":"A-1","paid":true}',
    );
    const three = await api.publishMessage({ tenant_id: tenant.id, event_type: created }, '{"order":"B-2"}');
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(3);

    // The operator's dialog gives the session's end in the console's format.
    await open(page, `/tenants?externalId=search-${run}`);
    await page.getByRole('button', { name: `Portal of search-${run}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Create portal link' }).click();
    await expect(dialog.getByTestId('portal-link-expires')).toHaveText(UTC_MINUTE);
    const link = (await dialog.getByTestId('portal-link').textContent())!;

    const portal = await context.newPage();
    await portal.goto(link);
    await portal.getByRole('button', { name: 'Open the portal' }).click();
    await expect(portal).toHaveURL(/\/portal$/);
    await expect(portal.getByTestId('portal-session-ends')).toHaveText(UTC_MINUTE);

    // The link's own origin: the session cookie belongs to it.
    await portal.goto(new URL('/portal/messages', link).toString());
    const search = portal.getByRole('form', { name: 'Search messages' });
    const listed = portal.getByTestId('portal-messages').locator('tr[data-message-id]');
    await expect(listed.first()).toHaveAttribute('data-message-id', three.id);

    await search.getByLabel('Search by').selectOption('externalId');
    await search.getByLabel('Value').fill(`ord-${run}`);
    await search.getByRole('button', { name: 'Search' }).click();
    await expect(listed).toHaveCount(2);
    await expect(listed.nth(0)).toHaveAttribute('data-message-id', two.id);
    await expect(listed.nth(1)).toHaveAttribute('data-message-id', one.id);

    await search.getByLabel('Search by').selectOption('eventType');
    await search.getByLabel('Value').fill(created);
    await search.getByRole('button', { name: 'Search' }).click();
    await expect(listed).toHaveCount(2);
    await expect(listed.nth(0)).toHaveAttribute('data-message-id', three.id);
    await expect(listed.nth(1)).toHaveAttribute('data-message-id', one.id);

    await search.getByLabel('Search by').selectOption('id');
    await search.getByLabel('Value').fill(one.id);
    await search.getByRole('button', { name: 'Search' }).click();
    await expect(listed).toHaveCount(1);
    await search.getByLabel('Value').fill('wdm_00000000000000000000000000');
    await search.getByRole('button', { name: 'Search' }).click();
    await expect(portal.getByTestId('portal-message-not-found')).toBeVisible();

    await portal.goto(new URL(`/portal/messages/${one.id}`, link).toString());
    await expect(portal.getByTestId('portal-payload')).toHaveText('{"order":"A-1","total":12.50}');
    const delivery = portal.getByTestId('portal-delivery').first();
    await expect(delivery.getByTestId('portal-delivery-target')).toContainText(`To Shop ${run} at ${receiver.url}`);
    await expect(delivery.getByTestId('portal-delivery-sequence')).toHaveText(' · sequence 1');
    await docsShot(portal, 'portal-message');
  } finally {
    await receiver.close();
  }
});
