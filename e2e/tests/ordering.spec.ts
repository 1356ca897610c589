import { expect, field, open, reload, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;

test('an ordered endpoint that holds: made in the console, it pauses on a failed delivery and goes on, in order, once enabled', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(400);
  try {
    const run = `ord-${unique()}`;
    const tenant = await api.createTenant(run, `Tenant ${run}`);
    const eventType = `order.step${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType, 'A state change that must arrive in order');
    await open(page, `/tenants/${tenant.id}/endpoints`);
    await page.getByRole('button', { name: 'New endpoint' }).click();
    const form = page.getByRole('dialog', { name: 'New endpoint' });
    await form.getByLabel('URL').fill(receiver.url);
    await form.getByLabel('Name').fill(`Ordered ${run}`);
    await form.getByRole('radiogroup', { name: 'Delivery order' }).getByText('Ordered').click();
    // One at a time: the concurrency is fixed at 1 while ordered.
    await expect(form.getByLabel('Max concurrency')).toBeDisabled();
    await expect(form.getByLabel('Max concurrency')).toHaveValue('1');
    await form.getByRole('radiogroup', { name: 'When a delivery fails for good' }).getByText('Hold').click();
    await snap(page, testInfo, '1-create-ordered');
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    const reveal = page.getByRole('dialog', { name: 'Signing secret', exact: true });
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('link', { name: `Ordered ${run}` }).click();
    await expect(page).toHaveURL(/\/endpoints\/wde_/);
    await expect(field(page, 'Endpoint settings', 'Delivery order')).toHaveText(
      'ordered, one at a time; on a final failure: hold (pause the endpoint)',
    );
    await expect(field(page, 'Endpoint settings', 'Max concurrency')).toHaveText('1');

    // The receiver refuses the first (400: no retry): the endpoint holds, the second waits behind it.
    const first = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"step":1}');
    const second = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"step":2}');
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(1);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(first.id);
    expect(receiver.received[0]!.headers['svc-sequence']).toBe('1');
    await expect
      .poll(
        async () => {
          await reload(page);
          return page.getByRole('table', { name: 'Circuit history' }).textContent();
        },
        { timeout: DELIVERY_TIMEOUT_MS },
      )
      .toContain('held (paused)');
    await expect(page.getByRole('table', { name: 'Circuit history' })).toContainText('failed: http_400');
    await expect(page.getByRole('button', { name: 'Enable' })).toBeVisible();
    await snap(page, testInfo, '2-held');
    expect(receiver.received).toHaveLength(1);

    // Fixed: enable, and the order goes on with the next number.
    receiver.answerWith(204);
    await page.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(second.id);
    expect(receiver.received[1]!.headers['svc-sequence']).toBe('2');
  } finally {
    await receiver.close();
  }
});
