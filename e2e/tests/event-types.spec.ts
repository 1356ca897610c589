import { expect, open, snap, test, unique } from '../support/fixtures';

test('create an event type whose example is shown back exactly as typed', async ({ signedIn: page }, testInfo) => {
  const name = `invoice_${unique()}.paid`;
  const example = '{"amount": 1.50,  "currency":"EUR", "lines": [ 1e3 ]}';
  await page.getByRole('link', { name: 'Event types' }).click();
  await page.getByRole('button', { name: 'New event type' }).click();
  const dialog = page.getByRole('dialog', { name: 'New event type' });
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('Description').fill('An invoice was paid in full');
  await dialog.getByLabel('Example').fill(example);
  await snap(page, testInfo, '1-create-form');
  await dialog.getByRole('button', { name: 'Create event type' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByText(`Event type ${name} created.`)).toBeVisible();

  await page.getByLabel('Find by name').fill(name);
  await page.getByRole('button', { name: 'Find' }).click();
  const row = page.getByRole('row').filter({ hasText: name });
  await expect(row).toContainText('An invoice was paid in full');
  // textContent, not innerText: every space and the number spellings 1.50 and 1e3 must survive.
  await expect.poll(() => row.getByTestId('event-type-example').textContent()).toBe(example);
  await snap(page, testInfo, '2-created');

  await row.getByRole('button', { name: `Edit ${name}` }).click();
  const editDialog = page.getByRole('dialog', { name: `Edit event type ${name}` });
  await expect(editDialog.getByLabel('Example')).toHaveValue(example);
  await snap(page, testInfo, '3-edit-shows-exact-example');
});

test('invalid JSON in the example shows an error under the editor while typing and blocks submit', async ({
  signedIn: page,
}, testInfo) => {
  await open(page, '/event-types');
  await page.getByRole('button', { name: 'New event type' }).click();
  const dialog = page.getByRole('dialog', { name: 'New event type' });
  await dialog.getByLabel('Name').fill(`draft_${unique()}.created`);
  const editor = dialog.getByLabel('Example');
  const submit = dialog.getByRole('button', { name: 'Create event type' });

  await editor.pressSequentially('{"amount": 1.50');
  await expect(editor).toHaveAccessibleDescription(/Not valid JSON/);
  await expect(editor).toHaveAttribute('aria-invalid', 'true');
  await expect(submit).toBeDisabled();
  await snap(page, testInfo, '1-invalid-json');

  await editor.press('End');
  await editor.pressSequentially('}');
  await expect(editor).not.toHaveAttribute('aria-invalid', 'true');
  await expect(editor).not.toHaveAccessibleDescription(/Not valid JSON/);
  await expect(submit).toBeEnabled();

  await editor.pressSequentially(',');
  await expect(editor).toHaveAccessibleDescription(/Not valid JSON/);
  await submit.click({ force: true });
  await expect(dialog).toBeVisible();
  await snap(page, testInfo, '2-still-blocked');
});

test('a reserved name such as svc.thing is refused next to the name field', async ({ signedIn: page }, testInfo) => {
  await open(page, '/event-types');
  await page.getByRole('button', { name: 'New event type' }).click();
  const dialog = page.getByRole('dialog', { name: 'New event type' });
  await dialog.getByLabel('Name').fill('svc.thing');
  await dialog.getByRole('button', { name: 'Create event type' }).click();
  await expect(dialog.getByLabel('Name')).toHaveAccessibleDescription(/reserved/);
  await expect(dialog.getByLabel('Name')).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog).toBeVisible();
  await snap(page, testInfo, 'reserved-name');
});

test('archive an event type, then unarchive it', async ({ signedIn: page, api }, testInfo) => {
  const name = `shipment_${unique()}.sent`;
  await api.createEventType(name, 'A shipment left the warehouse');
  await open(page, `/event-types?name=${name}`);
  const row = page.getByRole('row').filter({ hasText: name });
  await expect(row.getByText('archived', { exact: true })).toHaveCount(0);

  await row.getByRole('button', { name: `Archive ${name}` }).click();
  await expect(row.getByText('archived', { exact: true })).toBeVisible();
  await expect(row.getByRole('button', { name: `Unarchive ${name}` })).toBeVisible();
  await snap(page, testInfo, '1-archived');

  await row.getByRole('button', { name: `Unarchive ${name}` }).click();
  await expect(row.getByRole('button', { name: `Archive ${name}` })).toBeVisible();
  await expect(row.getByText('archived', { exact: true })).toHaveCount(0);
  await snap(page, testInfo, '2-unarchived');
});
