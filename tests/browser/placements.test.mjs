// Placements in the console (issue 42): links, snippets and QR codes made for a channel, the
// partner's sub-ID and per-channel codes, and the link preview per channel, in real Chromium.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seriousViolations, screenshots, signIn, useStack, USERS } from './lib/harness.mjs';

let stack;
let browser;
useStack((s, b) => {
  stack = s;
  browser = b;
});

async function openLink(page, slug) {
  await page.goto(`${stack.adminUrl}/console/#/links/${slug}`);
  await page.getByRole('heading', { name: `Link ${slug}` }).waitFor();
}

test('the share card makes its link, snippet and QR code for the channel typed in', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await openLink(page, 'tailscale');
  const url = page.getByLabel('Public link', { exact: true });
  const snippet = page.getByLabel('HTML snippet', { exact: true });
  const qr = page.getByRole('img', { name: /^QR code for / });
  assert.equal(await url.inputValue(), 'https://picks.example.com/go/tailscale');

  await page.getByLabel('Channel (src)').fill('newsletter-2026-48');
  const withChannel = 'https://picks.example.com/go/tailscale?src=newsletter-2026-48';
  await page.waitForFunction((want) => document.getElementById('share-url').value === want, withChannel);
  assert.match(await snippet.inputValue(), /href="https:\/\/picks\.example\.com\/go\/tailscale\?src=newsletter-2026-48"/);
  assert.match(await qr.getAttribute('src'), /[?&]src=newsletter-2026-48(&|$)/);
  await page.waitForFunction(() => document.querySelector('img.qr').naturalWidth > 0);
  // The QR code the console shows encodes the same URL as the API's for that channel.
  const shown = await page.evaluate(async () => (await fetch(document.querySelector('img.qr').src)).text());
  const api = await page.evaluate(async () => (await fetch('/api/v1/links/tailscale/qr.svg?size=192&src=newsletter-2026-48')).text());
  assert.equal(shown, api);
  for (const a of await page.getByRole('link', { name: /^Download QR code/ }).all()) {
    assert.match(await a.getAttribute('href'), /[?&]src=newsletter-2026-48&/);
  }
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'share-channel');

  // A channel the redirect would not count as itself is refused beside the field.
  await page.getByLabel('Channel (src)').fill('Jane Doe');
  await page.locator('#share-channel-error').waitFor();
  assert.equal(await page.getByLabel('Channel (src)').getAttribute('aria-invalid'), 'true');
  assert.equal(await url.inputValue(), withChannel);

  await page.getByLabel('Channel (src)').fill('');
  await page.waitForFunction(() => document.getElementById('share-url').value === 'https://picks.example.com/go/tailscale');
  assert.doesNotMatch(await qr.getAttribute('src'), /src=/);
  await context.close();
});

test('an editor sets the sub-ID and ordered channel codes; clicks and the link preview follow', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.goto(`${stack.adminUrl}/console/#/partners/tailscale`);
  await page.getByRole('heading', { name: 'Partner Tailscale' }).waitFor();
  await page.getByLabel('Sub-ID parameter').fill('subId1');
  await page.getByLabel('Token style').selectOption('readable');
  await page.getByLabel('Characters of readable tokens').fill('a-z0-9_');
  await page.getByRole('button', { name: 'Add a channel code' }).click();
  await page.getByLabel('Channel 1', { exact: true }).fill('newsletter');
  await page.getByLabel('Code for channel 1').fill('picks-nl');
  await page.getByRole('button', { name: 'Add a channel code' }).click();
  await page.getByLabel('Channel 2', { exact: true }).fill('blog-*');
  await page.getByLabel('Code for channel 2').fill('picks-blog');
  // The order is the rule (the first match wins): the prefix goes first.
  await page.getByRole('button', { name: 'Move channel 2 up' }).click();
  assert.equal(await page.getByLabel('Channel 1', { exact: true }).inputValue(), 'blog-*');
  assert.deepEqual(await seriousViolations(page), []);
  await page.getByRole('button', { name: 'Save placements' }).click();
  await page.getByText('Placements saved.').waitFor();
  await screenshots(page, 'partner-placements');
  const stored = await page.evaluate(async () => (await (await fetch('/api/v1/partners/tailscale')).json()));
  assert.equal(stored.subid_param, 'subId1');
  assert.equal(stored.subid_style, 'readable');
  assert.deepEqual(stored.channel_codes, [
    { channel: 'blog-*', ref_code: 'picks-blog' }, { channel: 'newsletter', ref_code: 'picks-nl' },
  ]);

  // A refused entry is named beside the list and changes nothing.
  await page.getByRole('button', { name: 'Add a channel code' }).click();
  await page.getByLabel('Channel 3', { exact: true }).fill('Not A Channel');
  await page.getByLabel('Code for channel 3').fill('x');
  await page.getByRole('button', { name: 'Save placements' }).click();
  await page.locator('#channel-code-2-channel-error').waitFor();
  assert.equal(await page.getByLabel('Channel 3', { exact: true }).getAttribute('aria-invalid'), 'true');
  await page.getByRole('button', { name: 'Remove channel 3' }).click();

  // A newsletter click carries its code and token within a second or two.
  let location = '';
  for (let i = 0; i < 40 && !/[?&]subId1=tailscale_newsletter(&|#|$)/.test(location); i++) {
    const r = await fetch(`${stack.publicUrl}/go/tailscale?src=newsletter`, { redirect: 'manual' });
    location = r.headers.get('location') || '';
    if (!/subId1=/.test(location)) await new Promise((done) => setTimeout(done, 100));
  }
  assert.match(location, /[?&]ref=picks-nl(&|#|$)/);
  assert.match(location, /[?&]subId1=tailscale_newsletter(&|#|$)/);

  // The link page's preview lists the code and token of direct and of each named channel.
  await page.goto(`${stack.adminUrl}/console/#/links/tailscale`);
  const table = page.getByRole('table', { name: 'Code and sub-ID token per channel' });
  await table.waitFor();
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  assert.deepEqual(rows, [
    ['direct', 'picks42', 'tailscale_direct'],
    ['blog-*', 'picks-blog', 'each channel its own'],
    ['newsletter', 'picks-nl', 'tailscale_newsletter'],
  ]);
  // "A reader is sent to" is what a click without src gets: the direct token included.
  assert.match(await page.locator('.preview code').first().innerText(), /[?&]subId1=tailscale_direct(&|#|$)/);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'link-placements');
  await context.close();
});
