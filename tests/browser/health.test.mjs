// A link's health in real Chromium (issue 18): the badge and hop chain of a stored finding, the
// links list filtered by health, and "Check now" against the link checker's local HTTPS test
// server (tests/linkcheck/scenario_server.py on 127.0.0.2, reached by refgate through
// REFGATE_LINKCHECK_RESOLVE and trusted through REFGATE_LINKCHECK_CA_FILE).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, ROOT, screenshots, seriousViolations, signIn, sleep, Stack, USERS } from './lib/harness.mjs';

let stack;
let browser;
let scenarios;
let checkerEnv;

// The scenario server, stopped after the file's tests (or when they fail).
async function startScenarios() {
  const dir = mkdtempSync(path.join(tmpdir(), 'refgate-scenarios-'));
  const child = spawn('/usr/bin/python3', [path.join(ROOT, 'tests/linkcheck/scenario_server.py'),
    '--dir', dir, '--address', '127.0.0.2'], { stdio: 'ignore' });
  const portFile = path.join(dir, 'port');
  for (let i = 0; i < 300 && !existsSync(portFile); i++) {
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  if (!existsSync(portFile)) throw new Error('the scenario server did not start');
  return { child, dir, port: Number(readFileSync(portFile, 'utf8')), ca: path.join(dir, 'ca.pem') };
}

function stopScenarios(s) {
  if (!s) return;
  s.child.kill('SIGTERM');
  rmSync(s.dir, { recursive: true, force: true });
}

// The links, one per scenario the page shows: a clean chain, one that moves to another domain
// (keeping the code in every hop) and one that drops the code.
function document(port) {
  const at = (p) => `https://shop.test:${port}${p}`;
  return {
    partners: [{ slug: 'shop', name: 'Shop', ref_param: 'ref', ref_code: 'picks42', allowed_domains: ['shop.test'] }],
    links: [
      { slug: 'shop-clean', partner: 'shop', destination: at('/clean') },
      { slug: 'shop-moved', partner: 'shop', destination: at('/moved') },
      { slug: 'shop-drop', partner: 'shop', destination: at('/drop') },
      // Automatic fallback (issue 44): its page is gone, so its readers get the fallback.
      { slug: 'shop-gone', partner: 'shop', destination: at('/gone'), fallback: at('/fallback'), auto_fallback: true },
    ],
  };
}

before(async () => {
  const launched = launchBrowser();
  scenarios = await startScenarios();
  checkerEnv = {
    REFGATE_LINKCHECK_CA_FILE: scenarios.ca,
    REFGATE_LINKCHECK_RESOLVE: ['shop.test', 'www.shop.test', 'other.test']
      .map((h) => `${h}:${scenarios.port}:127.0.0.2`).join(','),
    REFGATE_LINKCHECK_TIMEOUT_MS: '2000',
    REFGATE_LINKCHECK_HOST_INTERVAL_MS: '0',
    // A finding counts at its second check, whenever it comes; the schedule is off, so only the
    // test's checks run.
    REFGATE_LINKCHECK_CONFIRM_AFTER: '0s',
    REFGATE_LINKCHECK_INTERVAL: '0',
  };
  stack = new Stack();
  try {
    await stack.start(checkerEnv);
  } finally {
    browser = await launched;
  }
  const file = path.join(stack.work, 'shop.json');
  writeFileSync(file, JSON.stringify(document(scenarios.port)));
  stack.refgate(['import', file]);
  // Stored findings: `moved` confirmed by two checks, `ok` at once.
  for (let i = 0; i < 2; i++) stack.refgate(['check-links', '--slug', 'shop-moved'], { env: checkerEnv });
  stack.refgate(['check-links', '--slug', 'shop-clean'], { env: checkerEnv });
  for (let i = 0; i < 2; i++) stack.refgate(['check-links', '--slug', 'shop-gone'], { env: checkerEnv });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  stopScenarios(scenarios);
});

const healthCard = (page) => page.getByRole('region', { name: 'Health' });

async function openLink(page, slug) {
  await page.goto(`${stack.adminUrl}/console/#/links/${slug}`);
  await page.getByRole('heading', { name: `Link ${slug}`, level: 1 }).waitFor();
  await healthCard(page).waitFor();
}

test('a link with a stored finding shows its badge and hop chain, the referral code in each hop', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await openLink(page, 'shop-moved');
  const card = healthCard(page);
  await card.locator('.badge', { hasText: 'moved' }).waitFor();
  await card.getByText('other.test', { exact: false }).first().waitFor();
  const hops = card.getByRole('list', { name: 'Hops of the last check' }).getByRole('listitem');
  const texts = await hops.allInnerTexts();
  assert.equal(texts.length, 2, texts.join('\n'));
  assert.match(texts[0], /^302 https:\/\/shop\.test:\d+\/moved\?ref=picks42$/);
  assert.match(texts[1], /^200 https:\/\/other\.test:\d+\/p\/moved\?ref=picks42$/);
  // A viewer reads the health but cannot start a check.
  assert.equal(await card.getByRole('button', { name: 'Check now' }).count(), 0);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'link-health');
  await context.close();
});

test('the links list filters by health', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await page.getByRole('link', { name: 'Links' }).click();
  const table = page.getByRole('table', { name: 'Links' });
  await table.getByRole('link', { name: 'shop-drop', exact: true }).waitFor();
  const health = page.getByLabel('Filter by health', { exact: true });

  await health.selectOption('moved');
  await table.getByRole('link', { name: 'shop-clean', exact: true }).waitFor({ state: 'detached' });
  assert.deepEqual(await table.getByRole('link').allInnerTexts(), ['shop-moved']);

  await health.selectOption('ok');
  await table.getByRole('link', { name: 'shop-clean', exact: true }).waitFor();
  assert.deepEqual(await table.getByRole('link').allInnerTexts(), ['shop-clean']);

  await health.selectOption('code_dropped');
  await page.getByText('No link matches these filters.').waitFor();
  await context.close();
});

test('"Check now" checks the link against the partner\'s server and updates the badge', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await openLink(page, 'shop-drop');
  const card = healthCard(page);
  await card.getByText('Not checked yet.').waitFor();
  const check = card.getByRole('button', { name: 'Check now' });

  const [first] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/v1/links/shop-drop/health/check')),
    check.click(),
  ]);
  assert.equal(first.status(), 200);
  const answer = await first.json();
  assert.equal(answer.last.finding, 'code_dropped');
  assert.equal(answer.pending.state, 'code_dropped');
  await card.getByText(/^Seen once, waiting for a second check/).waitFor();
  const hops = await card.getByRole('list', { name: 'Hops of the last check' }).getByRole('listitem').allInnerTexts();
  assert.match(hops[0], /\/drop\?ref=picks42$/);
  assert.doesNotMatch(hops[hops.length - 1], /ref=/);

  // The second check confirms the finding: the badge says so.
  await check.click();
  await card.locator('.badge', { hasText: 'code_dropped' }).waitFor();
  await card.getByText(/^Seen once/).waitFor({ state: 'detached' });
  assert.equal(stack.psql("SELECT h.state FROM refgate_link_health h JOIN refgate_links l ON l.id = h.link_id WHERE l.slug = 'shop-drop'"), 'code_dropped');
  await context.close();
});

test('a link whose destination automatic fallback switched away says it serves its fallback, and why', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await openLink(page, 'shop-gone');
  await page.getByRole('status').filter({ hasText: 'Automatic fallback' })
    .getByText(/^serving fallback \(broken \(http_404\) since /).waitFor();
  const box = page.getByLabel(/^Serve the fallback while link health finds the destination broken/);
  assert.equal(await box.isChecked(), true);
  assert.deepEqual(await seriousViolations(page), []);
  // A link without automatic fallback shows nothing of it (a fresh load: the editor's form
  // keeps its values across a change of the hash alone).
  await page.goto('about:blank');
  await openLink(page, 'shop-clean');
  assert.equal(await page.getByText('Automatic fallback:').count(), 0);
  assert.equal(await page.getByLabel(/^Serve the fallback while/).isChecked(), false);
  await context.close();
});
