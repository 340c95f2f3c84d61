// Earnings in the console (issue 43): the Earnings page's figures against a hand-computed table,
// its CSV, a link's and a partner's earnings, and the partner's postback URL and secret rotation,
// in real Chromium. Commissions come in through the API: two currencies, a reversal and a sub-ID
// that names no link.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { click, seriousViolations, screenshots, signIn, sleep, useStack, USERS } from './lib/harness.mjs';

let stack;
let browser;
useStack((s, b) => {
  stack = s;
  browser = b;
});

// An API call from a signed-in page, with its session's CSRF token.
function call(page, method, path, { body, type, ifMatch, accept = 'application/json' } = {}) {
  return page.evaluate(async (a) => {
    const session = await (await fetch('/api/v1/session')).json();
    const headers = { 'X-CSRF-Token': session.csrf_token, Accept: a.accept };
    if (a.type) headers['Content-Type'] = a.type;
    if (a.ifMatch) headers['If-Match'] = a.ifMatch;
    const r = await fetch(`/api/v1${a.path}`, { method: a.method, headers, body: a.body });
    return { status: r.status, text: await r.text(), etag: r.headers.get('ETag') };
  }, { method, path, body, type, ifMatch, accept });
}

const occurredAt = new Date(Date.now() - 5000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const today = occurredAt.slice(0, 10);
let oldSecret;

const rowsOf = (table) => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));

// Once, from the first test that runs (after useStack's own hook has started the stack).
let ready;
const setUp = () => (ready ??= importCommissions());

async function importCommissions() {
  const { context, page } = await signIn(browser, stack, USERS.admin);
  // Readable tokens, so that the test writes the sub-IDs a network would echo back:
  // tailscale_direct and tailscale_newsletter name the link tailscale and its two channels.
  const partner = await call(page, 'GET', '/partners/tailscale');
  const patched = await call(page, 'PATCH', '/partners/tailscale', {
    type: 'application/json', ifMatch: partner.etag,
    body: JSON.stringify({ subid_param: 'subId1', subid_style: 'readable', subid_charset: 'a-z0-9_',
      channel_codes: [{ channel: 'newsletter', ref_code: 'picks-nl' }] }),
  });
  assert.equal(patched.status, 200, patched.text);

  // 4 human clicks on tailscale: 3 direct, 1 from the newsletter.
  for (let i = 0; i < 3; i++) assert.equal((await click(stack, 'tailscale')).status, 302);
  assert.equal((await click(stack, 'tailscale', '?src=newsletter')).status, 302);
  // Counted once flushed to PostgreSQL (a flush a second here), for the links and the placements.
  const humanClicks = async (group, placement) => {
    const { text } = await call(page, 'GET', `/stats/earnings?group=${group}`);
    const item = JSON.parse(text).items.find((i) => i.link === 'tailscale' && (group === 'link' || i.placement === placement));
    return item ? item.human_clicks : 0;
  };
  const counted = async () => (await humanClicks('link')) === 4 && (await humanClicks('placement', 'direct')) === 3
    && (await humanClicks('placement', 'newsletter')) === 1;
  for (let i = 0; i < 75 && !(await counted()); i++) await sleep(200);
  assert.ok(await counted(), 'the 4 clicks did not reach the earnings answer within 15 s');

  const csv = ['order_id,subid,tracking_id,status,amount,currency,occurred_at',
    `ORD-1,tailscale_direct,,approved,10.00,EUR,${occurredAt}`,
    `ORD-2,tailscale_direct,,pending,2.50,EUR,${occurredAt}`,
    `ORD-3,tailscale_newsletter,,approved,4.00,EUR,${occurredAt}`,
    `ORD-4,tailscale_newsletter,,approved,30,USD,${occurredAt}`,
    `ORD-5,nosuchlink_direct,,pending,7.25,GBP,${occurredAt}`].join('\n') + '\n';
  const imported = await call(page, 'POST', '/partners/tailscale/commissions', { type: 'text/csv', body: csv });
  assert.equal(imported.status, 200, imported.text);
  assert.equal(JSON.parse(imported.text).created, 5);
  assert.equal(JSON.parse(imported.text).unattributed, 1);
  // The network reverses ORD-3.
  const reversal = await call(page, 'POST', '/partners/tailscale/commissions', {
    type: 'application/json',
    body: JSON.stringify([{ order_id: 'ORD-3', subid: 'tailscale_newsletter', status: 'reversed', amount: '4.00',
      currency: 'EUR', occurred_at: occurredAt }]),
  });
  assert.equal(reversal.status, 200, reversal.text);
  assert.equal(JSON.parse(reversal.text).updated, 1);

  const made = await call(page, 'POST', '/partners/tailscale/postback-secret');
  assert.equal(made.status, 200, made.text);
  oldSecret = JSON.parse(made.text).secret;
  await context.close();
}

// The hand-computed table. tailscale: 4 human clicks; EUR 10.00 approved + 2.50 pending earned
// 12.50 (the 4.00 reversed earns nothing): EPC 12.50 / 4 = 3.1250; USD 30 approved: 30 / 4 =
// 7.5000. Its direct placement (3 clicks): EUR 12.50, EPC 4.1667; its newsletter placement
// (1 click): EUR 0 earned, 4.00 reversed, EPC 0.0000; USD 30, EPC 30.0000. GBP 7.25 pending is
// unattributed (its sub-ID names no link) and in no currency section.
test('the Earnings page shows the figures per currency, the unattributed apart, a chart and the CSV', async () => {
  await setUp();
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await page.getByRole('link', { name: 'Earnings' }).click();
  await page.getByRole('heading', { name: 'Earnings in EUR' }).waitFor();
  assert.deepEqual(
    (await page.getByRole('heading', { level: 2 }).allInnerTexts()).filter((h) => h.startsWith('Earnings in')),
    ['Earnings in EUR', 'Earnings in USD'],
  );
  await page.getByText('EUR: earned 12.50 (pending 2.50, approved 10.00, paid 0); reversed 4.00.').waitFor();
  await page.getByText('USD: earned 30 (pending 0, approved 30, paid 0); reversed 0.').waitFor();

  const table = (name) => page.getByRole('table', { name, exact: true });
  assert.deepEqual(await rowsOf(table('Top links by EPC (EUR)')), [['tailscale', 'tailscale', '4', '12.50', '4.00', '3.1250']]);
  assert.deepEqual(await rowsOf(table('Top links by EPC (USD)')), [['tailscale', 'tailscale', '4', '30', '0', '7.5000']]);
  assert.deepEqual(await rowsOf(table('Top placements by EPC (EUR)')), [
    ['tailscale', 'direct', '3', '12.50', '0', '4.1667'],
    ['tailscale', 'newsletter', '1', '0', '4.00', '0.0000'],
  ]);
  assert.deepEqual(await rowsOf(table('Top placements by amount (EUR)')), [
    ['tailscale', 'direct', '3', '12.50', '0', '4.1667'],
    ['tailscale', 'newsletter', '1', '0', '4.00', '0.0000'],
  ]);
  assert.deepEqual(await rowsOf(table('Top placements by amount (USD)')), [['tailscale', 'newsletter', '1', '30', '0', '30.0000']]);
  assert.deepEqual(await rowsOf(table('Unattributed amounts per currency')), [['GBP', '7.25', '0', '0', '0']]);
  await page.getByText('Conversions: 1 pending, 0 approved, 0 reversed, 0 paid.').waitFor();

  // The chart per day is drawn, and its table view has today's figures (all links together).
  const drawn = await page.evaluate(() => {
    const canvas = document.querySelector('.chart canvas');
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i]) painted++;
    return painted;
  });
  assert.ok(drawn > 100, `the earnings chart is blank (${drawn} pixels painted)`);
  await page.getByText('Table view: Earnings per day in EUR').click();
  const row = table('Earnings per day in EUR').getByRole('row').filter({ hasText: today });
  assert.deepEqual(await row.getByRole('cell').allInnerTexts(), [today, '12.50', '4.00', '3.1250']);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'earnings');

  // The CSV is the API's own, per placement here.
  await page.getByLabel('CSV rows per').selectOption('placement');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download earnings CSV' }).click()]);
  assert.match(download.suggestedFilename(), /^earnings-placement-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
  const downloaded = await readFile(await download.path(), 'utf8');
  const fromApi = await call(page, 'GET', `/stats/earnings?${new URLSearchParams({
    from: await page.getByLabel('From (UTC day)').inputValue(), to: today, group: 'placement' })}`, { accept: 'text/csv' });
  assert.equal(downloaded, fromApi.text);
  assert.match(downloaded, /^link,partner,placement,day,human_clicks,currency,/);
  assert.match(downloaded, /\ntailscale,tailscale,direct,,3,EUR,1,1,0,0,2\.50,10\.00,0,0,4\.1667\r?\n/);
  assert.match(downloaded, /\n,,,,,GBP,1,0,0,0,7\.25,0,0,0,/);
  await context.close();
});

test('a link\'s and a partner\'s pages show their earnings; a viewer sees no postback', async () => {
  await setUp();
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await page.goto(`${stack.adminUrl}/console/#/links/tailscale`);
  const linkTable = page.getByRole('table', { name: 'Earnings per currency: tailscale' });
  await linkTable.waitFor();
  assert.deepEqual(await rowsOf(linkTable), [
    ['EUR', '2.50', '10.00', '4.00', '0', '3.1250'],
    ['USD', '0', '30', '0', '0', '7.5000'],
  ]);
  await page.getByText(/: 4 human clicks; conversions 1 pending, 2 approved, 1 reversed, 0 paid\.$/).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'link-earnings');

  // A link without commissions says so.
  await page.goto(`${stack.adminUrl}/console/#/links/tailscale-blog`);
  await page.getByText('Earnings per currency: tailscale-blog: No commissions in this range.').waitFor();

  await page.goto(`${stack.adminUrl}/console/#/partners/tailscale`);
  const partnerTable = page.getByRole('table', { name: 'Earnings per currency: tailscale' });
  await partnerTable.waitFor();
  assert.deepEqual(await rowsOf(partnerTable), [
    ['EUR', '2.50', '10.00', '4.00', '0', '3.1250'],
    ['USD', '0', '30', '0', '0', '7.5000'],
  ]);
  assert.equal(await page.getByRole('heading', { name: 'Postback' }).count(), 0);
  assert.equal(await page.getByRole('button', { name: 'New postback secret' }).count(), 0);
  await context.close();
});

test('an admin sees the partner\'s postback URL and makes a new secret, shown once; the old one stops working', async () => {
  await setUp();
  const postback = (secret, order) => fetch(`${stack.publicUrl}/postback/tailscale?${new URLSearchParams({
    order_id: order, subid: 'tailscale_direct', status: 'pending', amount: '1.00', currency: 'EUR', occurred_at: occurredAt, secret })}`);
  assert.equal((await postback(oldSecret, 'PB-0')).status, 204);

  const editor = await signIn(browser, stack, USERS.editor);
  await editor.page.goto(`${stack.adminUrl}/console/#/partners/tailscale`);
  await editor.page.getByRole('heading', { name: 'Partner Tailscale' }).waitFor();
  await editor.page.getByRole('table', { name: 'Earnings per currency: tailscale' }).waitFor();
  assert.equal(await editor.page.getByRole('button', { name: 'New postback secret' }).count(), 0);
  await editor.context.close();

  const { context, page } = await signIn(browser, stack, USERS.admin);
  await page.goto(`${stack.adminUrl}/console/#/partners/tailscale`);
  await page.getByRole('heading', { name: 'Postback' }).waitFor();
  assert.equal(await page.getByLabel('Postback URL', { exact: true }).inputValue(),
    'https://picks.example.com/postback/tailscale?order_id=...&subid=...&status=...&amount=...&currency=...&occurred_at=...&secret=...');
  assert.equal(await page.getByLabel('Postback secret', { exact: true }).count(), 0);
  await page.getByRole('button', { name: 'New postback secret' }).click();
  await page.getByText('New secret made; the old one no longer works.').waitFor();
  const secret = await page.getByLabel('Postback secret', { exact: true }).inputValue();
  assert.match(secret, /^\S{16,}$/);
  assert.notEqual(secret, oldSecret);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'partner-postback');

  assert.equal((await postback(oldSecret, 'PB-1')).status, 401);
  assert.equal((await postback(secret, 'PB-2')).status, 204);
  assert.equal(stack.psql("SELECT string_agg(order_id, ',' ORDER BY order_id) FROM refgate_commissions WHERE order_id LIKE 'PB-%'"), 'PB-0,PB-2');

  // Shown once: the page read again has the URL but no secret.
  await page.reload();
  await page.getByRole('heading', { name: 'Postback' }).waitFor();
  assert.equal(await page.getByLabel('Postback secret', { exact: true }).count(), 0);
  await context.close();
});
