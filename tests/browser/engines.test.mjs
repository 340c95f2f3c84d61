// The console's main walk in Firefox and in Safari's engine (issue 15: "works in a current
// Chromium, Firefox and Safari, and on a phone-sized screen"), at desktop and phone width: sign
// in (the home page), change a partner's code and see /go/<slug> carry it, create a link (a bad
// destination first, then a targeting rule made with the rules form), sign out. One refgate for both engines; screenshots as engine-page-width.png.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { artifactPath, clickUntil, launchFirefox, useStack, USERS } from './lib/harness.mjs';
import { playwrightUi, webdriverUi } from './lib/ui.mjs';
import { launchWebKit } from './lib/webkit.mjs';

// Both browsers start while refgate does (Firefox takes the longest); closed after the last test.
async function launchBoth() {
  const [firefox, webkit] = await Promise.allSettled([launchFirefox(), launchWebKit()]);
  const close = () => Promise.all([firefox.value?.close(), webkit.value?.close()]);
  const failed = [firefox, webkit].find((r) => r.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  return { firefox: firefox.value, webkit: webkit.value, close };
}

let stack;
let browsers;
useStack((s, b) => {
  stack = s;
  browsers = b;
}, { launch: launchBoth });

const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

async function signIn(ui) {
  await ui.goto(`${stack.adminUrl}/console/`);
  await ui.fill('Name', USERS.editor.name);
  await ui.fill('Password', USERS.editor.password);
  await ui.click('button', 'Sign in');
  await ui.waitFor('button', 'Sign out');
}

// The first page after sign-in: today's figures, what is clicked right now, what needs attention.
async function home(ui, shot) {
  await ui.waitFor('heading', 'Today');
  await ui.waitFor('heading', 'Right now');
  await ui.waitFor('heading', 'Needs attention');
  await ui.screenshot(shot('home'));
}

async function changeCode(ui, partner, code, shot) {
  await ui.click('link', 'Partners');
  await ui.click('link', partner.slug);
  await ui.waitFor('heading', `Partner ${partner.name}`);
  await ui.fill('Referral code', code);
  await ui.click('button', 'Save');
  const saved = Date.now();
  await ui.waitText(`The code is now ${code}.`);
  const carries = (a) => (a.location || '').includes(`ref=${code}`);
  const { location } = await clickUntil(stack, partner.link, carries, 1000 - (Date.now() - saved));
  assert.ok(carries({ location }), `after 1 s /go/${partner.link} still sends readers to ${location}`);
  await ui.screenshot(shot('partner'));
}

async function createLink(ui, partner, slug, code, shot) {
  await ui.click('link', 'Links');
  await ui.click('button', 'New link');
  await ui.fill('Slug', slug);
  await ui.select('Partner', partner.slug);
  await ui.fill('Destination', 'https://evil.example.net/pricing');
  await ui.click('button', 'Create');
  assert.match(await ui.textOf('#link-destination-error'), /domain|host|allowed/i);
  assert.equal(await ui.attribute('Destination', 'aria-invalid'), 'true');
  assert.equal(await ui.attribute('Destination', 'aria-describedby'), 'link-destination-error');
  await ui.screenshot(shot('new-link-refused'));
  // A targeting rule made with the form: iPhones and iPads go to the iOS page.
  await ui.click('button', 'Add rule');
  await ui.select('Rule kind', 'platform');
  await ui.check('iOS');
  await ui.fill('Rule destination', `${partner.destination}/ios`);
  await ui.fill('Destination', partner.destination);
  // The server's preview of the Location first, as an editor reads it (and the form is still).
  // Only the preview carries the new code: the list below the form shows the demo links'
  // destinations, which begin with the same text.
  await ui.waitText(`${partner.destination}?ref=${code}`);
  await ui.click('button', 'Create');
  await ui.waitFor('heading', `Link ${slug}`);
  const { status, location } = await clickUntil(stack, slug, (a) => a.status === 302);
  assert.equal(status, 302);
  assert.ok(location.startsWith(`${partner.destination}?`) && location.includes(`ref=${code}`), location);
  const iphone = await fetch(`${stack.publicUrl}/go/${slug}`, {
    redirect: 'manual',
    headers: { 'User-Agent': IPHONE, Accept: 'text/html' },
  }).then((r) => r.headers.get('location'));
  assert.ok(iphone.startsWith(`${partner.destination}/ios?`) && iphone.includes(`ref=${code}`), iphone);
}

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

// The whole walk at one width, on the engine's own partner (the engines run at the same time);
// codes and slugs name the engine and width, so each run is its own.
async function walk(ui, engine, partner, { name, width }) {
  const shot = (page) => artifactPath(`${engine}-${page}-${name}`);
  try {
    await signIn(ui);
    assert.equal(await ui.evaluate(() => innerWidth), width);
    await home(ui, shot);
    await changeCode(ui, partner, `${engine}-${name}`, shot);
    await createLink(ui, partner, `${engine}-${name}-pricing`, `${engine}-${name}`, shot);
    await ui.click('button', 'Sign out');
    await ui.waitFor('button', 'Sign in');
    await ui.waitText('You have signed out.');
  } catch (e) {
    await ui.screenshot(shot('failed')).catch(() => {});
    // What the editor saw: the page's text and every field's value (a screenshot shows neither
    // a select's value nor text below the fold).
    const seen = await ui.evaluate(() => ({
      text: document.body.innerText.slice(0, 3000),
      fields: [...document.querySelectorAll('input, select, textarea')].map((f) => `${f.id}=${JSON.stringify(f.value)}`),
    })).catch((err) => ({ text: `(page unreadable: ${err.message})`, fields: [] }));
    // The fields first: CI shows only the first lines of a failure.
    e.message += `\n--- its fields: ${seen.fields.join(' ')}\n--- the page:\n${seen.text}`;
    throw e;
  }
}

const TAILSCALE = { slug: 'tailscale', name: 'Tailscale', link: 'tailscale', destination: 'https://tailscale.com/pricing' };
const HOSTING = { slug: 'example-hosting', name: 'Example Hosting', link: 'demo', destination: 'https://www.example.com/pricing' };

// The two engines walk at the same time: most of a walk is waiting on the other side.
describe('the console in Firefox and WebKit', { concurrency: 2 }, () => {
  test('Firefox ESR (WebDriver BiDi): sign in, a code change, a refused then created link, sign out', async () => {
    for (const size of WIDTHS) {
      const context = await browsers.firefox.newContext({ viewport: { width: size.width, height: size.height } });
      context.setDefaultTimeout(10000);
      try {
        await walk(playwrightUi(await context.newPage()), 'firefox', TAILSCALE, size);
      } finally {
        await context.close();
      }
    }
  });

  test('WebKit (WebKitWebDriver): sign in, a code change, a refused then created link, sign out', async () => {
    for (const size of WIDTHS) {
      await browsers.webkit.setViewport(size.width, size.height);
      await walk(webdriverUi(browsers.webkit), 'webkit', HOSTING, size);
    }
  });
});
