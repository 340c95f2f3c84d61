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
