// Signing in and out, sessions, a viewer's rights and CSRF, in real Chromium (issue 15).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { screenshots, seriousViolations, signIn, useStack, USERS } from './lib/harness.mjs';

let stack;
let browser;
useStack((s, b) => {
  stack = s;
  browser = b;
});

const signInPage = (page) => page.getByRole('button', { name: 'Sign in' });

test('an editor signs in with name and password; a wrong password is refused in words', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${stack.adminUrl}/console/`);
  await signInPage(page).waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'sign-in');

  await page.getByLabel('Name', { exact: true }).fill(USERS.editor.name);
  await page.getByLabel('Password', { exact: true }).fill('not-the-password');
  await signInPage(page).click();
  await page.getByRole('alert').getByText('name or password is wrong').waitFor();

  await page.getByLabel('Password', { exact: true }).fill(USERS.editor.password);
  await signInPage(page).click();
  await page.getByRole('heading', { name: 'Today', level: 1 }).waitFor();
  const [cookie] = await context.cookies();
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  await context.close();
});

test('a user changes their own password under Your account, then signs in with the new one', async () => {
  const user = { name: 'paula', password: 'slow river stones', role: 'editor' };
  stack.refgate(['user', 'create', '--name', user.name, '--role', user.role, '--password-stdin'],
    { input: `${user.password}\n` });
  const { context, page } = await signIn(browser, stack, user);
  const phone = await signIn(browser, stack, user);
  await page.getByRole('link', { name: 'Your account' }).click();
  await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
  assert.deepEqual(await seriousViolations(page), []);

  // A weak new password is refused beside its field, with the rule it breaks.
  await page.getByLabel('Current password').fill(user.password);
  await page.getByLabel('New password', { exact: true }).fill('€€€€');
  await page.getByLabel('New password again').fill('€€€€');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('must be at least 12 characters').waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  await screenshots(page, 'account');

  const fresh = 'wide open meadows';
  await page.getByLabel('New password', { exact: true }).fill(fresh);
  await page.getByLabel('New password again').fill(fresh);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByRole('status').getByText('Your password has been changed').waitFor();
  assert.equal(await page.getByLabel('Current password').inputValue(), '');

  // The phone's session has ended (its home page, polling, may have found out already); this one
  // goes on.
  await phone.page.goto(`${stack.adminUrl}/console/#/links`);
  await signInPage(phone.page).waitFor();
  await page.getByRole('link', { name: 'Links' }).click();
  await page.getByRole('heading', { name: 'Links', level: 1 }).waitFor();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Name', { exact: true }).fill(user.name);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await signInPage(page).click();
  await page.getByRole('alert').getByText('name or password is wrong').waitFor();
  await page.getByLabel('Password', { exact: true }).fill(fresh);
  await signInPage(page).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await phone.context.close();
  await context.close();
});

test('signing out leads back to the sign-in page, also after a reload', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signInPage(page).waitFor();
  await page.getByText('You have signed out.').waitFor();
  await page.reload();
  await signInPage(page).waitFor();
  await context.close();
});

test('an expired session leads back to the sign-in page', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  stack.psql(`UPDATE refgate_console_sessions SET expires_at = now() - interval '1 second'
              WHERE user_name = '${USERS.editor.name}'`);
  // Ended behind the service's back (as by another instance): noticed once its check of the
  // session is no longer kept, within REFGATE_AUTH_CACHE_SECONDS (5 s by default).
  await new Promise((resolve) => setTimeout(resolve, 5500));
  // The home page polls the live figures every few seconds: its next request may find the
  // session ended before the click does. Either must lead to the sign-in page.
  await page.getByRole('link', { name: 'Links' }).click({ timeout: 5000 }).catch(async (e) => {
    if (!(await signInPage(page).isVisible())) throw e;
  });
  await signInPage(page).waitFor();
  await page.getByText('Your session has ended. Sign in again.').waitFor();
  await context.close();
});

test('a viewer gets no Save on a partner page and the API refuses a viewer\'s save', async () => {
  const { context, page } = await signIn(browser, stack, USERS.viewer);
  await page.goto(`${stack.adminUrl}/console/#/partners/tailscale`);
  await page.getByRole('heading', { name: 'Partner Tailscale' }).waitFor();
  await page.getByText('You have the viewer role').first().waitFor();
  assert.equal(await page.getByRole('button', { name: 'Save', exact: true }).count(), 0);
  // Even a hand-made request with the session's CSRF token is refused.
  const status = await page.evaluate(async () => {
    const session = await (await fetch('/api/v1/session')).json();
    const r = await fetch('/api/v1/partners/tailscale', {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrf_token, 'If-Match': '*' },
      body: JSON.stringify({ ref_code: 'viewer-was-here' }),
    });
    return r.status;
  });
  assert.equal(status, 403);
  await context.close();
});

test('a form auto-posted from another origin does not create a link (CSRF)', async () => {
  const { context, page } = await signIn(browser, stack, USERS.editor);
  const evil = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>prize</title>
      <form id="f" method="POST" action="${stack.adminUrl}/api/v1/links" enctype="text/plain">
      <input name='{"slug":"csrf-probe","partner":"tailscale","destination":"https://tailscale.com/","x":"' value='"}'>
      </form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  try {
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/links') && r.request().method() === 'POST');
    await page.goto(`http://127.0.0.1:${evil.address().port}/`);
    const response = await answer;
    assert.ok([401, 403].includes(response.status()), `the cross-site post got ${response.status()}`);
    assert.equal(stack.psql("SELECT count(*) FROM refgate_links WHERE slug = 'csrf-probe'"), '0');
  } finally {
    evil.close();
    await context.close();
  }
});
