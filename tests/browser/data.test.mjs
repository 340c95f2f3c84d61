// Bulk import, disclosures, stats, country groups and the admin pages in real Chromium (issues 15
// and 19).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { click, clickUntil, screenshots, seriousViolations, signIn, sleep, useStack, USERS } from './lib/harness.mjs';

let stack;
let browser;
useStack((s, b) => {
  stack = s;
  browser = b;
});

const header = 'slug,partner,destination,status,expires_at,fallback,utm_passthrough\n';
const csvFile = (name, rows) => ({ name, mimeType: 'text/csv', buffer: Buffer.from(header + rows.join('\n') + '\n') });

test('a bulk file is checked in a dry run, refusals are explained, and applied all at once', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Bulk' }).click();
  const file = page.getByLabel(/^Import file/);

  await file.setInputFiles(csvFile('bad.csv', [
    'bulk-one,backblaze,https://www.backblaze.com/b2,active,,,false',
    'bulk-bad,backblaze,https://evil.example.net/,active,,,false',
  ]));
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  const refused = page.getByRole('table', { name: 'Refused' });
  await refused.getByRole('cell', { name: 'bulk-bad', exact: true }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Apply' }).count(), 0);
  await page.getByText('nothing is applied while any is refused').waitFor();

  await file.setInputFiles(csvFile('good.csv', [
    'bulk-one,backblaze,https://www.backblaze.com/b2,active,,,false',
    'backup,backblaze,https://www.backblaze.com/cloud-backup/business,active,2099-12-31T23:59:59Z,,false',
  ]));
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  await page.getByRole('table', { name: 'Would be created' }).getByRole('cell', { name: 'bulk-one', exact: true }).waitFor();
  await page.getByRole('table', { name: 'Would be changed' }).getByRole('cell', { name: 'backup', exact: true }).waitFor();
  assert.equal(stack.psql("SELECT count(*) FROM refgate_links WHERE slug = 'bulk-one'"), '0');
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'bulk-dry-run');

  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText(/^Applied: 1 created, 1 changed/).waitFor();
  assert.equal(stack.psql("SELECT count(*) FROM refgate_links WHERE slug = 'bulk-one'"), '1');
  // The new link redirects once the snapshot has followed the write (within a second, by
  // LISTEN/NOTIFY): a click at once may still find the snapshot before it.
  assert.equal((await clickUntil(stack, 'bulk-one', (a) => a.status === 302)).status, 302);
  await context.close();
});

test('a disclosure edit shows the server\'s sanitised preview and becomes a new version', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Disclosures' }).click();
  await page.getByRole('button', { name: 'Edit general (en)' }).click();
  await page.getByLabel('Text', { exact: true }).fill('Paid picks: links carry our referral code.');
  await page.getByLabel(/^HTML/).fill(
    '<strong>Paid picks</strong> <script>alert(1)</script><a href="javascript:alert(1)" onclick="x()">code</a>');
  const preview = page.locator('.disclosure-preview');
  await preview.locator('strong').waitFor();
  const html = await preview.innerHTML();
  assert.doesNotMatch(html, /<script|javascript:|onclick/i);
  await page.getByRole('button', { name: 'Save text' }).click();
  await page.getByText('Saved as a new version.').waitFor();
  const history = page.getByRole('table', { name: 'Version history' });
  await history.getByText('Paid picks: links carry our referral code.').waitFor();
  // Locators re-resolve, so this waits out the history's reload after the save.
  await history.locator('tbody tr').nth(1).waitFor();
  assert.equal(await history.locator('tbody tr').count(), 2);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'disclosures');
  await context.close();
});

test('a read answered 503 with Retry-After (a busy database) is tried again as told, not shown as an error', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  let answered = 0;
  const today = new Date().toISOString().slice(0, 10);
  await page.route('**/api/v1/stats/overview*', (route) => {
    // The range's own figures (the page also reads the period before, for the comparison).
    if (!route.request().url().includes(`to=${today}`)) return route.continue();
    answered++;
    if (answered > 1) return route.continue();
    return route.fulfill({
      status: 503,
      headers: { 'Retry-After': '1', 'Content-Type': 'application/problem+json' },
      body: JSON.stringify({ type: 'about:blank', title: 'unavailable', status: 503 }),
    });
  });
  await page.getByRole('link', { name: 'Stats' }).click();
  await page.getByText(/Totals: \d+ human/).waitFor();
  assert.equal(answered, 2);
  await context.close();
});

test('stats draw a chart of the clicks the test made, with a table view', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  const humanClicks = () => page.evaluate(async () => (await (await fetch('/api/v1/stats/overview')).json()).totals.human);
  const before = await humanClicks();
  for (let i = 0; i < 3; i++) assert.equal((await click(stack, 'tailscale-blog', '?src=news')).status, 302);
  const expected = before + 3;
  // Counts reach the stats API within the aggregation window (100 ms here) plus a send. Polled
  // from here: waitForFunction takes an async predicate's promise for a truthy answer and returns
  // at once, and the Stats page, loaded before the counts arrive, would never show them.
  const deadline = Date.now() + 10000;
  while ((await humanClicks()) !== expected && Date.now() < deadline) await sleep(200);
  assert.equal(await humanClicks(), expected);
  await page.getByRole('link', { name: 'Stats' }).click();
  await page.getByText(`Totals: ${expected} human`).waitFor();
  const drawn = await page.evaluate(() => {
    const canvas = document.querySelector('.chart canvas');
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i]) painted++;
    return painted;
  });
  assert.ok(drawn > 100, `the chart canvas is blank (${drawn} pixels painted)`);
  await page.getByText('Table view: Clicks per day by class').click();
  const today = new Date().toISOString().slice(0, 10);
  const row = page.getByRole('table', { name: 'Clicks per day by class' }).getByRole('row').filter({ hasText: today });
  assert.equal(await row.getByRole('cell').nth(1).innerText(), String(expected));
  await page.getByText('Table view: Human clicks per day by channel').click();
  await page.getByRole('table', { name: 'Human clicks per day by channel' }).getByRole('columnheader', { name: 'news' }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'stats');
  await context.close();
});

test('a targeted link\'s clicks show by country and by rule branch on the stats page', async () => {
  // The counts as a flush leaves them (tests/integration/targeting_admin_test.cpp counts them
  // through X-Forwarded-For and a country database).
  stack.psql(`UPDATE refgate_links SET rules = '[{"language": ["de"], "destination": "https://tailscale.com/de"}]'
              WHERE slug = 'tailscale'`);
  stack.psql(`INSERT INTO refgate_click_counts_by_country (link_id, day, country, rule, human, bot)
              SELECT id, (now() AT TIME ZONE 'UTC')::date, v.country, v.rule, v.human, v.bot
              FROM refgate_links, (VALUES ('DE', '1', 4, 1), ('US', '0', 2, 0)) AS v(country, rule, human, bot)
              WHERE slug = 'tailscale'`);
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await page.getByRole('link', { name: 'Stats' }).click();
  await page.getByLabel('Link (slug)').fill('tailscale');
  await page.getByRole('button', { name: 'Show breakdown' }).click();
  const countries = page.getByRole('table', { name: 'Clicks by country: tailscale' });
  const germany = countries.getByRole('row').filter({ hasText: 'DE' });
  assert.equal(await germany.getByRole('cell').nth(1).innerText(), '4');
  assert.equal(await germany.getByRole('cell').nth(2).innerText(), '1');
  const rules = page.getByRole('table', { name: 'Clicks by rule branch: tailscale' });
  await rules.getByRole('cell', { name: 'rule 1', exact: true }).waitFor();
  await rules.getByRole('cell', { name: 'link destination (no rule matched)' }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'stats-breakdown');
  await page.getByLabel('Link (slug)').fill('backup');
  await page.getByRole('button', { name: 'Show breakdown' }).click();
  await page.getByText('backup has no targeting rules').waitFor();
  await context.close();
});

test('a country group is refused field by field, then added and shown', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Country groups' }).click();
  await page.getByLabel('Partner family (e.g. amazon)').fill('backblaze');
  await page.getByLabel('Fallbacks', { exact: true }).fill('AT=AT');
  await page.getByRole('button', { name: 'Add group' }).click();
  // The server's reason beside the field, which is marked invalid.
  await page.locator('#new-fallbacks[aria-invalid="true"]').waitFor();
  await page.locator('#new-fallbacks-error').waitFor();
  await page.getByLabel('Fallbacks', { exact: true }).fill('AT=DE\nNZ=AU');
  await page.getByRole('button', { name: 'Add group' }).click();
  const table = page.getByRole('table', { name: 'Country groups' });
  await table.getByRole('cell', { name: 'AT → DE, NZ → AU' }).waitFor();
  assert.equal(stack.psql("SELECT fallbacks->>'NZ' FROM refgate_country_groups WHERE family = 'backblaze'"), 'AU');
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'country-groups');
  // Its editor opens on the new group: a change saved under If-Match, then (after a reload) the
  // group deleted.
  await page.getByLabel('Fallbacks of backblaze').fill('AT=DE\nNZ=AU\nLI=CH');
  await page.getByRole('button', { name: 'Save group' }).click();
  await page.getByText('Saved.').waitFor();
  // (Stored as JSONB: the keys come back in its order.)
  await table.getByRole('cell', { name: 'AT → DE, LI → CH, NZ → AU' }).waitFor();
  await page.reload();
  await page.getByRole('button', { name: 'Edit backblaze' }).click();
  await page.getByRole('button', { name: 'Delete group backblaze' }).click();
  await page.getByText('No country group yet.').waitFor();
  assert.equal(stack.psql("SELECT count(*) FROM refgate_country_groups WHERE family = 'backblaze'"), '0');
  await context.close();
});

test('an admin adds a branded domain, sets where its unknown slugs go, and deletes it', async () => {
  const { context, page } = await signIn(browser, stack, USERS.admin);
  await page.getByRole('link', { name: 'Domains' }).click();
  await page.getByLabel('Host (e.g. go.example.com)').fill('Go.Example.COM');
  await page.getByRole('button', { name: 'Add domain' }).click();
  const table = page.getByRole('table', { name: 'Domains' });
  await table.getByRole('cell', { name: 'go.example.com', exact: true }).waitFor();
  await page.locator('#domain-not-found').fill('https://www.example.com/missing');
  await page.getByRole('button', { name: 'Save domain' }).click();
  await page.getByText('Saved.').waitFor();
  await table.getByRole('cell', { name: 'https://www.example.com/missing' }).waitFor();
  assert.equal(stack.psql("SELECT not_found FROM refgate_domains WHERE host = 'go.example.com'"),
    'https://www.example.com/missing');
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'domains');
  // Someone else changes it meanwhile: the next save is refused with that reason, not saved over.
  stack.psql("UPDATE refgate_domains SET not_found = NULL, version = version + 1 WHERE host = 'go.example.com'");
  await page.locator('#domain-not-found').fill('https://www.example.com/gone');
  await page.getByRole('button', { name: 'Save domain' }).click();
  await page.getByText('Someone changed this domain meanwhile').waitFor();
  assert.equal(stack.psql("SELECT coalesce(not_found, 'none') FROM refgate_domains WHERE host = 'go.example.com'"), 'none');
  await page.reload();
  await page.getByRole('button', { name: 'Edit go.example.com' }).click();
  await page.getByRole('button', { name: 'Delete domain go.example.com' }).click();
  await page.getByText('No domain yet').waitFor();
  assert.equal(stack.psql('SELECT count(*) FROM refgate_domains'), '0');
  await context.close();
});

test('admins see the audit trail of console changes and the users and tokens', async () => {
  const { context, page } = await signIn(browser, stack, USERS.admin);
  await page.getByRole('link', { name: 'Audit' }).click();
  await page.getByRole('table', { name: 'Audit trail (newest first)' }).waitFor();
  await page.getByLabel('Actor (exact, e.g. user:alice)').fill(`user:${USERS.editor.name}`);
  await page.getByLabel('Actor (exact, e.g. user:alice)').press('Tab');
  await page.getByRole('cell', { name: `user:${USERS.editor.name}` }).first().waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'audit');

  await page.getByRole('link', { name: 'Users and tokens' }).click();
  await page.getByRole('table', { name: 'Users' }).getByRole('cell', { name: USERS.viewer.name, exact: true }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'users');
  await context.close();
});
