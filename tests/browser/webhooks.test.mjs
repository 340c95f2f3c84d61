// The Webhooks page in real Chromium (issue 44): an admin adds a webhook (its secret shown once),
// refgate delivers an event to the webhook tests' HTTPS receiver (tests/webhooks/receiver.py on
// 127.0.0.2, reached through REFGATE_WEBHOOK_RESOLVE and trusted through REFGATE_WEBHOOK_CA_FILE),
// the delivery log shows it, and "send again" sends it once more.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, ROOT, screenshots, seriousViolations, signIn, sleep, Stack, USERS } from './lib/harness.mjs';

let stack;
let browser;
let receiver;

async function startReceiver() {
  const dir = mkdtempSync(path.join(tmpdir(), 'refgate-receiver-'));
  const child = spawn('/usr/bin/python3', [path.join(ROOT, 'tests/webhooks/receiver.py'),
    '--dir', dir, '--address', '127.0.0.2'], { stdio: 'ignore' });
  const portFile = path.join(dir, 'port');
  for (let i = 0; i < 300 && !existsSync(portFile); i++) {
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  if (!existsSync(portFile)) throw new Error('the webhook receiver did not start');
  return { child, dir, port: Number(readFileSync(portFile, 'utf8')), ca: path.join(dir, 'ca.pem') };
}

// The requests the receiver got whose body names `marker`.
function received(marker) {
  const file = path.join(receiver.dir, 'requests.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((r) => r.body.includes(marker));
}

async function waitReceived(marker, n) {
  for (let i = 0; i < 200 && received(marker).length < n; i++) await sleep(50);
  return received(marker);
}

before(async () => {
  const launched = launchBrowser();
  receiver = await startReceiver();
  stack = new Stack();
  try {
    await stack.start({
      REFGATE_WEBHOOK_CA_FILE: receiver.ca,
      REFGATE_WEBHOOK_RESOLVE: `hooks.test:${receiver.port}:127.0.0.2`,
    });
  } finally {
    browser = await launched;
  }
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  if (receiver) {
    receiver.child.kill('SIGTERM');
    rmSync(receiver.dir, { recursive: true, force: true });
  }
});

test('an admin adds a webhook, sees its secret once, its delivery log, and sends a delivery again', async () => {
  const { context, page } = await signIn(browser, stack, USERS.admin);
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();

  // A private address is refused beside the field.
  await page.getByLabel('Receiver URL (https)').fill('https://127.0.0.1/hook');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await page.getByText(/private, loopback/).waitFor();

  await page.getByLabel('Receiver URL (https)').fill(`https://hooks.test:${receiver.port}/ok`);
  await page.getByRole('button', { name: 'Add webhook' }).click();
  const secret = page.getByLabel('Signing secret');
  await secret.waitFor();
  assert.match(await secret.inputValue(), /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'webhooks');

  // An event: a partner made with the CLI is delivered, signed with that secret.
  const file = path.join(stack.work, 'hooked.json');
  writeFileSync(file, JSON.stringify({
    partners: [{ slug: 'hooked-co', name: 'Hooked', ref_param: 'ref', ref_code: 'picks42', allowed_domains: ['hooked.example'] }],
    links: [],
  }));
  stack.refgate(['import', file]);
  const first = await waitReceived('hooked-co', 1);
  assert.equal(first.length, 1);

  for (let i = 0; i < 100 && stack.psql('SELECT status FROM refgate_webhook_deliveries') !== 'delivered'; i++) await sleep(50);

  // Shown once: after a reload the page has no secret.
  await page.reload();
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  assert.equal(await page.getByLabel('Signing secret').count(), 0);

  await page.getByRole('button', { name: /^Show deliveries of webhook/ }).click();
  const log = page.getByRole('table', { name: /^Deliveries of webhook/ });
  await log.getByRole('cell', { name: 'delivered', exact: true }).waitFor();
  assert.match(await log.innerText(), /partner\.created/);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'webhook-deliveries');

  await log.getByRole('button', { name: /^Send delivery \d+ again$/ }).click();
  await page.getByText(/will be sent again/).waitFor();
  const again = await waitReceived('hooked-co', 2);
  assert.equal(again.length, 2);
  assert.equal(again[1].headers['webhook-id'], again[0].headers['webhook-id']);
  await context.close();
});

test('editors do not see the Webhooks page in the menu', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('link', { name: 'Partners' }).first().waitFor();
  assert.equal(await page.getByRole('link', { name: 'Webhooks' }).count(), 0);
  await context.close();
});
