import { expect, open, reload, type RestApi, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;
/** Replay batches run as jobs and the completion check follows every 5 s: created, delivered, then completed. */
const REPLAY_TIMEOUT_MS = 45_000;
/** Analytics trail the transitions by about 20 s (the rollup job's interval) plus a run. */
const ANALYTICS_TIMEOUT_MS = 60_000;

async function setup(api: RestApi, receiverUrl: string) {
  const run = `replay-${unique()}`;
  const tenant = await api.createTenant(run, `Outage ${run}`);
  const eventType = `order.shipped${run.replace(/[^a-z0-9]/g, '')}`;
  await api.createEventType(eventType, 'An order was shipped');
  const endpoint = await api.createEndpoint({ tenant_id: tenant.id, url: receiverUrl, name: `Orders ${run}` });
  return { run, tenant, eventType, endpoint };
}

test('after an outage, a replay bounded by its estimate sends each dead letter once more and completes live', async ({
  signedIn: page,
  api,
}, testInfo) => {
  test.setTimeout(180_000);
  const receiver = await startReceiver(400);
  try {
    const { tenant, eventType, endpoint } = await setup(api, receiver.url);
    const messages = [];
    for (const order of [1, 2, 3])
      messages.push(await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, `{"order":${order}}`));

    // 400 is not retried: each delivery fails on its first attempt and becomes a dead letter of the endpoint.
    await open(page, `/dead-letters?endpoint=${endpoint.id}`);
    const table = page.getByRole('table', { name: 'Dead letters' });
    await expect(async () => {
      await reload(page);
      await expect(table.locator('tbody tr[data-delivery-id]')).toHaveCount(3, { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await page.waitForLoadState('networkidle');
    const beforeFix = receiver.received.length;
    expect(beforeFix).toBe(3);

    // The receiver is fixed. The dialog estimates first; the bound is set to exactly the estimate.
    receiver.answerWith(204);
    await page.getByRole('button', { name: 'Replay dead letters' }).click();
    const dialog = page.getByRole('dialog', { name: `Replay dead letters of ${endpoint.name}` });
    const matched = dialog.getByTestId('replay-estimate-matched');
    await expect(matched).toHaveText(/^3 dead letters match: 3 deliveries can be replayed for 0\.\d+ USD\.$/);
    const cost = /for (\S+) USD/.exec((await matched.textContent())!)![1]!;
    await expect(dialog.getByTestId('replay-estimate-skipped')).toHaveCount(0);
    await dialog.getByRole('textbox', { name: 'Max cost (USD)' }).fill(cost);
    await expect(dialog.getByTestId('replay-estimate-bound')).toHaveText(
      `Within the bound of ${cost} USD: all 3 deliveries, for ${cost} USD.`,
    );
    await snap(page, testInfo, '01-estimate');
    await dialog.getByRole('button', { name: `Start replay: 3 deliveries for ${cost} USD` }).click();

    // The replay's page follows it without a reload until it completes.
    await expect(page).toHaveURL(/\/replays\/wdr_[0-9a-z]+$/);
    const replayId = new URL(page.url()).pathname.split('/').at(-1)!;
    await expect(page.getByTestId('replay-status')).toHaveText('completed', { timeout: REPLAY_TIMEOUT_MS });
    await expect(page.getByTestId('replay-created')).toHaveText('3 of 3 created');
    await expect(page.getByTestId('replay-delivered')).toHaveText('3 succeeded, 0 failed, 0 pending of 3');
    await expect(page.getByTestId('replay-cost')).toHaveText(
      `${cost} USD charged so far of ${cost} USD estimated for 3 deliveries (bound: ${cost} USD)`,
    );
    await expect(page.getByTestId('replay-reason')).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Cancel replay' })).toHaveCount(0);
    await expect(page.getByRole('progressbar', { name: 'Succeeded' })).toHaveAttribute('aria-valuenow', '100');
    await snap(page, testInfo, '02-completed');

    // The receiver got each message exactly once more, with its original webhook-id.
    const replayed = receiver.received.slice(beforeFix).map((request) => request.headers['webhook-id']);
    expect(replayed.sort()).toEqual(messages.map((message) => message.id).sort());

    // The endpoint's page lists the replay; so does the replays list.
    await open(page, `/endpoints/${endpoint.id}`);
    const row = page.getByRole('table', { name: 'Endpoint replays' }).locator(`tr[data-replay-id="${replayId}"]`);
    await expect(row.getByTestId('replay-status')).toHaveText('completed');
    await expect(row).toContainText(`${cost}`);
    await page.getByRole('link', { name: 'All replays of this endpoint' }).click();
    await expect(page).toHaveURL(new RegExp(`/replays\\?endpoint=${endpoint.id}$`));
    await expect(page.getByRole('table', { name: 'Replays' }).locator('tbody tr[data-replay-id]')).toHaveCount(1);
    await page.getByRole('link', { name: replayId }).click();
    await expect(page).toHaveURL(new RegExp(`/replays/${replayId}$`));
    await expect(page.getByTestId('replay-status')).toHaveText('completed');

    // The dashboard of the endpoint shows the outage and the recovery once the rollups caught up (about 20 s).
    await open(page, `/dashboard?endpoint=${endpoint.id}`);
    await expect(page.getByTestId('dashboard-scope')).toHaveText(
      new RegExp(`^Showing endpoint ${endpoint.name}, .* per hour\\.$`),
    );
    await expect(async () => {
      await reload(page);
      await expect(page.getByTestId('total-succeeded')).toHaveText('3', { timeout: 1_000 });
    }).toPass({ timeout: ANALYTICS_TIMEOUT_MS });
    // The 3 originals failed, their 3 replays succeeded.
    await expect(page.getByTestId('total-messages')).toHaveText('3');
    await expect(page.getByTestId('total-failures')).toHaveText('3');
    await expect(page.getByTestId('total-success-rate')).toHaveText('50%');
    await expect(page.getByTestId('queue-depth-now')).toHaveText('0');
    const outcomes = page.getByTestId('chart-outcomes');
    await expect(outcomes.locator('.recharts-bar-rectangle path').first()).toBeVisible();
    // The time axis reaches the newest hour, where the bars are (it once stopped hours before them).
    const windowEnd = /to (\d{4}-\d\d-\d\d \d\d:\d\d) UTC, per hour\.$/.exec(
      (await page.getByTestId('dashboard-scope').textContent())!,
    )![1]!;
    const newestHour = new Date(Date.parse(`${windowEnd.replace(' ', 'T')}:00Z`) - 1).toISOString();
    const timeLabels = outcomes
      .locator('.recharts-cartesian-axis-tick-value')
      .filter({ hasText: /^\d\d-\d\d \d\d:00$/ });
    await expect(timeLabels.last()).toHaveText(`${newestHour.slice(5, 10)} ${newestHour.slice(11, 13)}:00`);
    await snap(page, testInfo, '03-dashboard');

    // The endpoint's own page charts the same outcomes.
    await open(page, `/endpoints/${endpoint.id}`);
    const success = page.getByTestId('endpoint-success');
    await expect(success.getByTestId('endpoint-success-summary')).toHaveText(
      '3 succeeded, 3 failed or expired: 50% succeeded in the last 24 hours.',
    );
    await expect(success.getByTestId('chart-outcomes').locator('.recharts-bar-rectangle path').first()).toBeVisible();
    await expect(success.getByTestId('chart-success-rate').locator('.recharts-line-dots circle').last()).toBeVisible();
    await snap(page, testInfo, '04-endpoint-success');
  } finally {
    await receiver.close();
  }
});

test('a replay bounded below its estimate stops at the bound, says why, and cannot be canceled afterwards', async ({
  signedIn: page,
  api,
}) => {
  test.setTimeout(120_000);
  const receiver = await startReceiver(400);
  try {
    const { tenant, eventType, endpoint } = await setup(api, receiver.url);
    for (const order of [1, 2, 3])
      await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, `{"order":${order}}`);
    await open(page, `/dead-letters?endpoint=${endpoint.id}`);
    await expect(async () => {
      await reload(page);
      await expect(page.getByRole('table', { name: 'Dead letters' }).locator('tbody tr[data-delivery-id]')).toHaveCount(
        3,
        { timeout: 1_000 },
      );
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await page.waitForLoadState('networkidle');
    receiver.answerWith(204);

    // From the endpoint's page this time; every message costs the same, so a third of the estimate buys one.
    await open(page, `/endpoints/${endpoint.id}`);
    await page.getByRole('button', { name: 'Replay dead letters' }).click();
    const dialog = page.getByRole('dialog');
    const matched = dialog.getByTestId('replay-estimate-matched');
    await expect(matched).toHaveText(/^3 dead letters match/);
    const cost = /for (\S+) USD/.exec((await matched.textContent())!)![1]!;
    const one = (Number(cost) / 3).toFixed(6);
    await dialog.getByRole('textbox', { name: 'Max cost (USD)' }).fill(one);
    // The API writes money without trailing zeros.
    await expect(dialog.getByTestId('replay-estimate-bound')).toHaveText(
      `Within the bound of ${Number(one)} USD: 1 delivery for ${Number(one)} USD, oldest first; the replay stops there.`,
    );
    await dialog.getByRole('button', { name: /^Start replay: 1 delivery for 0\.\d+ USD$/ }).click();

    await expect(page).toHaveURL(/\/replays\/wdr_/);
    await expect(page.getByTestId('replay-status')).toHaveText('completed', { timeout: REPLAY_TIMEOUT_MS });
    await expect(page.getByTestId('replay-created')).toHaveText('1 of 3 created');
    await expect(page.getByTestId('replay-delivered')).toHaveText('1 succeeded, 0 failed, 0 pending of 1');
    await expect(page.getByTestId('replay-reason')).toContainText('max_cost_reached');
    await expect(page.getByRole('button', { name: 'Cancel replay' })).toHaveCount(0);
    expect(receiver.received).toHaveLength(4);
  } finally {
    await receiver.close();
  }
});
