import { expect, open, reload, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

interface RestUsage {
  month: string;
  total_usd: string;
  keys: { key_id: string; spent_usd: string; spending_limit_usd: string | null; remaining_usd: string | null }[];
}

test('the usage page shows the month’s spend per meter, per key and per day, equal to the API’s report', async ({
  signedIn: page,
  api,
}, testInfo) => {
  test.setTimeout(120_000);
  const receiver = await startReceiver();
  try {
    const run = `usage-${unique()}`;
    const tenant = await api.createTenant(run, `Usage ${run}`);
    const eventType = `usage.tick${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType, 'A metered message');
    await api.createEndpoint({ tenant_id: tenant.id, url: receiver.url, name: `Meter ${run}` });
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"tick":1}');

    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Usage' }).click();
    await expect(page).toHaveURL(/\/usage$/);
    await page.waitForLoadState('networkidle');
    // Charges land with the admission; read the report and the page until they agree (nothing else runs now).
    let report: RestUsage | undefined;
    await expect(async () => {
      report = await api.get<RestUsage>('/platform/meta/usage');
      await reload(page);
      await expect(page.getByTestId('usage-total')).toHaveText(`${report.total_usd} USD`, { timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
    expect(Number(report!.total_usd)).toBeGreaterThan(0);
    await expect(page.getByRole('textbox', { name: 'Billing month (UTC)' })).toHaveValue(
      `${report!.month} (this month)`,
    );
    await expect(page.getByTestId('usage-status')).toContainText('open');

    // Both meters were used: the message was accepted (ingest) and sent (delivery).
    const meters = page.getByRole('table', { name: 'Spend per meter' });
    for (const meter of ['webhooks.ingest_64k', 'webhooks.delivery_16k']) {
      const row = meters.locator(`tr[data-meter="${meter}"]`).first();
      await expect(row.getByTestId('meter-units')).not.toHaveText('0');
      await expect(row.getByTestId('meter-usd')).toHaveText(/^0\.\d+$/);
    }

    // The key that paid, with its limit and what is left (none set on the e2e key).
    const payer = report!.keys.find((key) => Number(key.spent_usd) > 0)!;
    const row = page.getByRole('table', { name: 'Spend per key' }).locator(`tr[data-key-id="${payer.key_id}"]`);
    await expect(row.getByTestId('key-spent')).toHaveText(payer.spent_usd);
    await expect(row.getByTestId('key-limit')).toHaveText(payer.spending_limit_usd ?? 'none');
    await expect(row.getByTestId('key-remaining')).toHaveText(payer.remaining_usd ?? 'no limit');
    await snap(page, testInfo, '01-this-month');

    // Spend per day, from the billing record: bars to today, today's figure at most the total, the busiest day named.
    const spend = page.getByTestId('usage-daily-spend');
    await expect(spend.locator('.recharts-bar-rectangle path').first()).toBeVisible();
    const today = new Date().toISOString().slice(0, 10);
    const spendLabels = spend.locator('.recharts-cartesian-axis-tick-value').filter({ hasText: /^\d\d-\d\d$/ });
    await expect(spendLabels.last()).toHaveText(today.slice(5));
    const todayText = (await spend.getByTestId('usage-today').textContent()) ?? '';
    const todayUsd = Number(new RegExp(`^Today \\(${today}\\): ([0-9.]+) USD$`).exec(todayText)?.[1]);
    expect(todayUsd, todayText).toBeGreaterThan(0);
    expect(todayUsd).toBeLessThanOrEqual(Number(report!.total_usd));
    await expect(spend.getByTestId('usage-busiest-day')).toHaveText(/^Most in one day: 0\.\d+ USD on \d{4}-\d\d-\d\d$/);

    // Activity per day: the month's messages and deliveries as bars, once the analytics caught up (about 20 s).
    const daily = page.getByTestId('usage-daily');
    await expect(async () => {
      await reload(page);
      await expect(daily.locator('.recharts-bar-rectangle path').first()).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 60_000 });
    const dayLabels = daily.locator('.recharts-cartesian-axis-tick-value').filter({ hasText: /^\d\d-\d\d$/ });
    await expect(dayLabels.first()).toHaveText(new RegExp(`^${report!.month.slice(5)}-\\d\\d$`));
    await snap(page, testInfo, '01b-per-day');

    // The month before: closed when asked for, with nothing spent (the stack is newer than that).
    const [year, month] = report!.month.split('-').map(Number) as [number, number];
    const previous = new Date(Date.UTC(year, month - 2, 1)).toISOString().slice(0, 7);
    await page.getByRole('textbox', { name: 'Billing month (UTC)' }).click();
    await page.getByRole('option', { name: previous, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/usage\\?month=${previous}$`));
    await expect(page.getByTestId('usage-total')).toHaveText('0 USD');
    await expect(page.getByTestId('usage-status')).toContainText('closed');
    await expect(page.getByTestId('usage-busiest-day')).toHaveText('Nothing charged');
    await expect(page.getByTestId('usage-today')).toHaveCount(0);
    await snap(page, testInfo, '02-previous-month');

    // Back to this month through the selector.
    await open(page, `/usage?month=${previous}`);
    await page.getByRole('textbox', { name: 'Billing month (UTC)' }).click();
    await page.getByRole('option', { name: `${report!.month} (this month)` }).click();
    await expect(page).toHaveURL(/\/usage$/);
    await expect(page.getByTestId('usage-status')).toContainText('open');
  } finally {
    await receiver.close();
  }
});
