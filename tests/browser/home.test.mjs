// The editors' home and the targeting rules form in real Chromium (issue 45): the page after
// sign-in ("Today"), its "Right now" region showing a click sent from outside within 10 s, its
// "Needs attention" list with a confirmed broken link and a code switch due tomorrow; a two-rule
// link built with the form alone redirecting an iPhone and a German-speaking reader as the
// preview said, and one whose Country rule (Germany) sends a reader from Germany where the preview
// said; a split whose weights do not total 100 refused beside its field; axe on each.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { click, screenshots, seriousViolations, signIn, sleep, useStack, USERS } from './lib/harness.mjs';

let stack;
let browser;
// A reader from Germany: 198.51.100.0/24 is German in this stack's country database, and the
// test's requests come from 127.0.0.1 as from a trusted proxy forwarding the reader's address.
const GERMAN_ADDRESS = '198.51.100.7';
useStack((s, b) => {
  stack = s;
  browser = b;
}, {
  env: (s) => ({
    REFGATE_GEOIP_DB: s.countryDatabase([['198.51.100.0', '198.51.100.255', 'DE'], ['192.0.2.0', '192.0.2.255', 'US']]),
    REFGATE_TRUSTED_PROXIES: '127.0.0.1',
  }),
});

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

// A reader's click: its Location (never followed). `from`: the reader's address, as the trusted
// proxy forwards it.
async function visit(slug, { agent = DESKTOP, language = 'en', from } = {}) {
  const headers = { 'User-Agent': agent, Accept: 'text/html', 'Accept-Language': language };
  if (from) headers['X-Forwarded-For'] = from;
  const r = await fetch(`${stack.publicUrl}/go/${slug}`, { redirect: 'manual', headers });
  return r.headers.get('location');
}

// An API call from a signed-in page, with its session's CSRF token.
function call(page, method, apiPath, { body, ifMatch } = {}) {
  return page.evaluate(async (a) => {
    const session = await (await fetch('/api/v1/session')).json();
    const headers = { 'X-CSRF-Token': session.csrf_token, Accept: 'application/json' };
    if (a.body) headers['Content-Type'] = 'application/json';
    if (a.ifMatch) headers['If-Match'] = a.ifMatch;
    const r = await fetch(`/api/v1${a.apiPath}`, { method: a.method, headers, body: a.body });
    return { status: r.status, text: await r.text(), etag: r.headers.get('ETag') };
  }, { method, apiPath, body: body && JSON.stringify(body), ifMatch });
}

test('home: "Today" after sign-in, and "Right now" shows a click sent from outside within 10 s', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await page.getByRole('heading', { name: 'Today', level: 1 }).waitFor();
  const now = page.getByRole('region', { name: 'Right now' });
  await now.getByText('No human clicks in the last minutes.').waitFor();
  await page.getByRole('region', { name: 'Needs attention' }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);

  const sent = Date.now();
  assert.equal((await click(stack, 'backup')).status, 302);
  // No reload: the page polls.
  await now.getByRole('link', { name: 'backup', exact: true }).waitFor({ timeout: 10000 });
  assert.ok(Date.now() - sent <= 10000);
  await now.getByText('backup: 1 human click').waitFor();
  const today = page.getByRole('table', { name: /^Clicks today \(UTC\) by class/ });
  await today.getByRole('row', { name: /^human 1 0 new today$/ }).waitFor({ timeout: 10000 });
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'home');
  // The link opens the link's page (its stats among it).
  await now.getByRole('link', { name: 'backup', exact: true }).click();
  await page.getByRole('heading', { name: 'Link backup', level: 1 }).waitFor();
  await context.close();
});

test('home: "Needs attention" lists a confirmed broken link and a code switch due tomorrow', async () => {
  // A link whose shop refuses connections, found broken by two checks (the second confirms).
  const file = path.join(stack.work, 'broken.json');
  writeFileSync(file, JSON.stringify({
    partners: [{ slug: 'shop', name: 'Shop', ref_param: 'ref', ref_code: 'picks42', allowed_domains: ['shop.test'] }],
    links: [{ slug: 'shop-broken', partner: 'shop', destination: 'https://shop.test:9/deal' }],
  }));
  stack.refgate(['import', file]);
  const checker = {
    REFGATE_LINKCHECK_RESOLVE: 'shop.test:9:127.0.0.1',
    REFGATE_LINKCHECK_TIMEOUT_MS: '2000',
    REFGATE_LINKCHECK_CONFIRM_AFTER: '0s',
  };
  for (let i = 0; i < 2; i++) stack.refgate(['check-links', '--slug', 'shop-broken'], { env: checker });

  const { context, page } = await signIn(browser, stack, USERS.editor);
  // Backblaze's next code, from tomorrow noon UTC.
  const tomorrow = new Date(Date.now() + 86400e3).toISOString().slice(0, 10);
  const partner = await call(page, 'GET', '/partners/backblaze');
  const scheduled = await call(page, 'PATCH', '/partners/backblaze', {
    ifMatch: partner.etag, body: { ref_code: 'summer-27', valid_from: `${tomorrow}T12:00:00Z` },
  });
  assert.equal(scheduled.status, 200, scheduled.text);

  await page.reload();
  const attention = page.getByRole('region', { name: 'Needs attention' });
  const broken = attention.getByRole('link', { name: /^shop-broken: health broken/ });
  await broken.waitFor();
  await attention.getByRole('link', { name: /^Backblaze: code switches to summer-27 at / }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'home-attention');
  // Each item leads to where it is fixed.
  await broken.click();
  await page.getByRole('heading', { name: 'Link shop-broken', level: 1 }).waitFor();
  await page.goBack();
  await attention.getByRole('link', { name: /^Backblaze: code switches/ }).click();
  await page.getByRole('heading', { name: 'Partner Backblaze', level: 1 }).waitFor();
  await context.close();
});

// The preview's Location for the reader chosen beside it, once the preview (250 ms after the
// form stops changing) shows one that starts with `expected`.
async function previewFor(page, { platform = '', language = '', country = '' }, expected) {
  await page.getByLabel('Country (e.g. DE)').fill(country);
  await page.getByLabel('Platform', { exact: true }).selectOption(platform);
  await page.getByLabel('Language (e.g. fr-CH)').fill(language);
  const code = page.locator('.preview code');
  let text = '';
  for (let i = 0; i < 100 && !text.startsWith(expected); i++) {
    await sleep(100);
    text = (await code.count()) ? await code.innerText() : '';
  }
  return text;
}

test('rules form: a two-rule link built with the form alone redirects an iPhone and a German reader as the preview said', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Links', exact: true }).click();
  await page.getByRole('button', { name: 'New link' }).click();
  await page.getByLabel('Slug', { exact: true }).fill('two-rules');
  await page.getByLabel('Partner', { exact: true }).selectOption('tailscale');
  await page.getByLabel('Destination', { exact: true }).fill('https://tailscale.com/pricing');

  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByLabel('Rule kind').nth(0).selectOption('platform');
  await page.getByRole('checkbox', { name: 'iOS' }).check();
  // A destination outside the partner's domains: the server's refusal beside its field.
  await page.getByLabel('Rule destination').nth(0).fill('https://evil.example.net/ios');
  await page.getByRole('button', { name: 'Create' }).click();
  const refused = page.locator('#rule-0-destination-error');
  await refused.waitFor();
  assert.match(await refused.innerText(), /domain|host|allowed/i);
  assert.equal(await page.getByLabel('Rule destination').nth(0).getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await seriousViolations(page), []);
  await page.getByLabel('Rule destination').nth(0).fill('https://tailscale.com/ios');

  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByLabel('Rule kind').nth(1).selectOption('language');
  await page.getByLabel('Languages').fill('de');
  await page.getByLabel('Rule destination').nth(1).fill('https://tailscale.com/de');
  // Moved and back: the order is the form's.
  await page.getByRole('button', { name: 'Move rule 2 up' }).click();
  assert.equal(await page.getByLabel('Rule kind').nth(0).inputValue(), 'language');
  await page.getByRole('button', { name: 'Move rule 1 down' }).click();
  assert.equal(await page.getByLabel('Rule kind').nth(0).inputValue(), 'platform');

  // The JSON behind the toggle is what the form says.
  await page.getByLabel('Edit as JSON').check();
  const json = JSON.parse(await page.getByLabel('Targeting rules (JSON)').inputValue());
  assert.deepEqual(json, [
    { platform: ['ios'], destination: 'https://tailscale.com/ios' },
    { language: ['de'], destination: 'https://tailscale.com/de' },
  ]);
  await page.getByLabel('Edit as JSON').uncheck();
  await page.getByLabel('Rule kind').nth(1).waitFor();

  const iphoneSaid = await previewFor(page, { platform: 'ios' }, 'https://tailscale.com/ios?');
  const germanSaid = await previewFor(page, { language: 'de-DE' }, 'https://tailscale.com/de?');
  const otherSaid = await previewFor(page, { platform: 'desktop', language: 'en' }, 'https://tailscale.com/pricing?');
  assert.ok(iphoneSaid.startsWith('https://tailscale.com/ios?'), iphoneSaid);
  assert.ok(germanSaid.startsWith('https://tailscale.com/de?'), germanSaid);
  assert.ok(otherSaid.startsWith('https://tailscale.com/pricing?'), otherSaid);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'rules-form');

  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Link two-rules', level: 1 }).waitFor();
  // Each reader goes where the preview said (the snapshot reaches the redirects within a second).
  let location = null;
  for (let i = 0; i < 40 && location !== iphoneSaid; i++) {
    location = await visit('two-rules', { agent: IPHONE });
    if (location !== iphoneSaid) await sleep(100);
  }
  assert.equal(location, iphoneSaid);
  assert.equal(await visit('two-rules', { language: 'de-DE,de;q=0.9' }), germanSaid);
  assert.equal(await visit('two-rules'), otherSaid);

  // The saved link's page shows the same rules in the form.
  assert.equal(await page.getByLabel('Rule kind').nth(0).inputValue(), 'platform');
  assert.equal(await page.getByRole('checkbox', { name: 'iOS' }).isChecked(), true);
  assert.equal(await page.getByLabel('Languages').inputValue(), 'de');
  await context.close();
});

test('rules form: a Country rule (Germany) sends a reader from Germany where the preview said', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Links', exact: true }).click();
  await page.getByRole('button', { name: 'New link' }).click();
  await page.getByLabel('Slug', { exact: true }).fill('from-germany');
  await page.getByLabel('Partner', { exact: true }).selectOption('tailscale');
  await page.getByLabel('Destination', { exact: true }).fill('https://tailscale.com/pricing');

  // Readers in Germany first, then German speakers anywhere else.
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByLabel('Rule kind').nth(0).selectOption('country');
  await page.getByLabel('Countries').selectOption({ label: 'Germany (DE)' });
  await page.getByLabel('Rule destination').nth(0).fill('https://tailscale.com/de');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByLabel('Rule kind').nth(1).selectOption('language');
  await page.getByLabel('Languages').fill('de');
  await page.getByLabel('Rule destination').nth(1).fill('https://tailscale.com/deutsch');

  await page.getByLabel('Edit as JSON').check();
  assert.deepEqual(JSON.parse(await page.getByLabel('Targeting rules (JSON)').inputValue()), [
    { country: ['DE'], destination: 'https://tailscale.com/de' },
    { language: ['de'], destination: 'https://tailscale.com/deutsch' },
  ]);
  await page.getByLabel('Edit as JSON').uncheck();
  await page.getByLabel('Rule kind').nth(1).waitFor();

  const fromGermanySaid = await previewFor(page, { country: 'DE', language: 'en' }, 'https://tailscale.com/de?');
  const speakerSaid = await previewFor(page, { country: 'US', language: 'de-DE' }, 'https://tailscale.com/deutsch?');
  const otherSaid = await previewFor(page, { country: 'US', language: 'en' }, 'https://tailscale.com/pricing?');
  assert.ok(fromGermanySaid.startsWith('https://tailscale.com/de?'), fromGermanySaid);
  assert.ok(speakerSaid.startsWith('https://tailscale.com/deutsch?'), speakerSaid);
  assert.ok(otherSaid.startsWith('https://tailscale.com/pricing?'), otherSaid);
  assert.deepEqual(await seriousViolations(page), []);

  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Link from-germany', level: 1 }).waitFor();
  // A reader in Germany (by the address the proxy forwards) who reads English goes where the
  // preview said for Germany; the snapshot reaches the redirects within a second.
  let location = null;
  for (let i = 0; i < 40 && location !== fromGermanySaid; i++) {
    location = await visit('from-germany', { from: GERMAN_ADDRESS });
    if (location !== fromGermanySaid) await sleep(100);
  }
  assert.equal(location, fromGermanySaid);
  assert.equal(await visit('from-germany', { from: '192.0.2.7', language: 'de-DE,de;q=0.9' }), speakerSaid);
  assert.equal(await visit('from-germany', { from: '192.0.2.7' }), otherSaid);

  // The saved link's page shows the country in the form.
  const chosen = await page.getByLabel('Countries').evaluate((select) => [...select.selectedOptions].map((o) => o.value));
  assert.deepEqual(chosen, ['DE']);
  await context.close();
});

test('rules form: a split whose weights do not total 100 is refused beside its field', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Links', exact: true }).click();
  await page.getByRole('button', { name: 'New link' }).click();
  await page.getByLabel('Slug', { exact: true }).fill('split-90');
  await page.getByLabel('Partner', { exact: true }).selectOption('tailscale');
  await page.getByLabel('Destination', { exact: true }).fill('https://tailscale.com/pricing');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByLabel('Rule kind').selectOption('split');
  const weights = page.getByLabel('Weight', { exact: true });
  const destinations = page.getByLabel('Branch destination');
  await weights.nth(0).fill('50');
  await weights.nth(1).fill('40');
  await destinations.nth(0).fill('https://tailscale.com/a');
  await destinations.nth(1).fill('https://tailscale.com/b');
  await page.getByRole('button', { name: 'Create' }).click();
  const error = page.locator('#rule-0-split-0-weight-error');
  await error.waitFor();
  assert.match(await error.innerText(), /must total 100 \(now 90\)/);
  assert.equal(await weights.nth(0).getAttribute('aria-invalid'), 'true');
  assert.equal(await weights.nth(0).getAttribute('aria-describedby'), 'rule-0-split-0-weight-error');
  assert.deepEqual(await seriousViolations(page), []);
  // Nothing was saved.
  assert.equal((await call(page, 'GET', '/links/split-90')).status, 404);

  await weights.nth(1).fill('50');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Link split-90', level: 1 }).waitFor();
  await context.close();
});
