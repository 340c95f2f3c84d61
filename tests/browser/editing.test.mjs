// Partners, codes and links edited in real Chromium, checked where readers see them (issue 15).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clickUntil, copyToDocs, screenshots, seriousViolations, signIn, useStack, USERS,
} from './lib/harness.mjs';

let stack;
let browser;
useStack((s, b) => {
  stack = s;
  browser = b;
});

async function openPartner(page, slug, name) {
  await page.goto(`${stack.adminUrl}/console/#/partners/${slug}`);
  await page.getByRole('heading', { name: `Partner ${name}` }).waitFor();
}

test('the partner list and search are reachable and accessible', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Partners', exact: true }).click();
  await page.getByLabel('Search partners (slug or name)').fill('tail');
  await page.getByRole('link', { name: 'backblaze', exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'tailscale', exact: true }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'partners');
  await context.close();
});

test('a changed referral code reaches /go/<slug> within a second', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await openPartner(page, 'tailscale', 'Tailscale');
  assert.deepEqual(await seriousViolations(page), []);
  await page.getByLabel('Referral code', { exact: true }).fill('winter-26');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const saved = Date.now();
  await page.getByText('The code is now winter-26.').waitFor();
  const carriesCode = (a) => /[?&]ref=winter-26/.test(a.location || '');
  const { location } = await clickUntil(stack, 'tailscale', carriesCode, 1000 - (Date.now() - saved));
  assert.match(location || '', /[?&]ref=winter-26/, `after 1 s /go/tailscale still sends readers to ${location}`);
  await page.getByRole('table', { name: 'Code history' }).getByText('winter-26').waitFor();
  const desktop = await screenshots(page, 'partner');
  copyToDocs(desktop, 'console.png');
  await context.close();
});

test('a scheduled switch, entered in the editor\'s time zone, is listed and stored in UTC', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor, { timezoneId: 'Europe/Berlin' });
  await openPartner(page, 'backblaze', 'Backblaze');
  await page.getByLabel('Referral code', { exact: true }).fill('spring-27');
  await page.getByLabel('At a date and time').check();
  await page.getByLabel(/^Switch at/).fill('2027-03-01T09:30');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const table = page.getByRole('table', { name: 'Scheduled switches' });
  await table.getByRole('cell', { name: 'spring-27', exact: true }).waitFor();
  // 09:30 in Berlin (UTC+1 in March) is 08:30 UTC.
  const expected = '2027-03-01T08:30:00Z';
  await table.getByRole('cell', { name: expected, exact: true }).waitFor();
  const stored = stack.psql(`SELECT to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
    FROM refgate_code_schedule WHERE ref_code = 'spring-27'`);
  assert.equal(stored, expected);
  await context.close();
});

test('a link with a bad destination is refused next to the field, a good one is created', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Links' }).click();
  await page.getByRole('button', { name: 'New link' }).click();
  await page.getByLabel('Slug', { exact: true }).fill('tailscale-pricing');
  await page.getByLabel('Partner', { exact: true }).selectOption('tailscale');
  const destination = page.getByLabel('Destination', { exact: true });
  await destination.fill('https://evil.example.net/pricing');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.waitForFunction(() => document.getElementById('link-destination-error'));
  assert.equal(await destination.getAttribute('aria-invalid'), 'true');
  const refusal = await page.locator('#link-destination-error').innerText();
  assert.match(refusal, /domain|host|allowed/i);
  assert.equal(await destination.getAttribute('aria-describedby'), 'link-destination-error');
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'new-link-refused');

  await destination.fill('https://tailscale.com/pricing');
  // The server's preview of the Location (the code is winter-26 since the test above).
  await page.getByText('https://tailscale.com/pricing?ref=winter-26').waitFor();
  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Link tailscale-pricing' }).waitFor();
  const { status, location } = await clickUntil(stack, 'tailscale-pricing', (a) => a.status === 302);
  assert.equal(status, 302);
  assert.match(location, /^https:\/\/tailscale\.com\/pricing\?.*ref=/);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'link');
  await page.getByRole('link', { name: 'Links' }).click();
  await page.getByRole('link', { name: 'tailscale-pricing' }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'links');
  await context.close();
});

// Password managers, autofill and WebDriver's Element Clear set a field's value and fire only
// "change": the form must take that value, and a later render must not put the old one back.
test('a destination announced by a change event alone is the one previewed', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Links' }).click();
  await page.getByRole('button', { name: 'New link' }).click();
  await page.getByLabel('Partner', { exact: true }).selectOption('tailscale');
  const destination = page.getByLabel('Destination', { exact: true });
  await destination.fill('https://tailscale.com/old');
  await page.getByText('https://tailscale.com/old?ref=').waitFor();
  await destination.evaluate((field) => {
    field.value = 'https://tailscale.com/autofilled';
    field.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await page.getByText('https://tailscale.com/autofilled?ref=').waitFor();
  assert.equal(await destination.inputValue(), 'https://tailscale.com/autofilled');
  await context.close();
});

test('a second editor saving over the first one\'s change sees both versions', async () => {
  const first = await signIn(browser, stack, USERS.editor);
  const second = await signIn(browser, stack, USERS.editor2);
  await openPartner(first.page, 'example-hosting', 'Example Hosting');
  await openPartner(second.page, 'example-hosting', 'Example Hosting');

  await first.page.getByLabel('Referral code', { exact: true }).fill('first-wins');
  await first.page.getByRole('button', { name: 'Save', exact: true }).click();
  await first.page.getByText('The code is now first-wins.').waitFor();

  await second.page.getByLabel('Referral code', { exact: true }).fill('second-late');
  await second.page.getByRole('button', { name: 'Save', exact: true }).click();
  const conflict = second.page.getByRole('alert').filter({ hasText: 'Someone else changed this' });
  await conflict.waitFor();
  await conflict.getByText('"second-late"').waitFor();
  await conflict.getByText('"first-wins"').first().waitFor();
  assert.deepEqual(await seriousViolations(second.page), []);
  await screenshots(second.page, 'conflict');
  await conflict.getByRole('button', { name: 'Overwrite' }).click();
  await conflict.waitFor({ state: 'detached' });
  assert.equal(stack.psql("SELECT ref_code FROM refgate_partners WHERE slug = 'example-hosting'"), 'second-late');
  await first.context.close();
  await second.context.close();
});
