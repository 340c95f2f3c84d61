// The few things the cross-engine smoke test does to a page, by accessible name, over two
// drivers: a Playwright page (Firefox over BiDi) and a WebDriver session (WebKit). Each returns
// the same small interface, so engines.test.mjs describes the editor's walk once.
import { ELEMENT } from './webkit.mjs';
import { sleep } from './harness.mjs';

const TIMEOUT = 10000;

// Playwright resolves names with its own accessibility rules (getByLabel / getByRole, exact).
export function playwrightUi(page) {
  const field = (name) => page.getByLabel(name, { exact: true });
  return {
    goto: (url) => page.goto(url),
    fill: (name, value) => field(name).fill(value),
    select: (name, value) => field(name).selectOption(value),
    check: (name) => field(name).check(),
    click: (role, name) => page.getByRole(role, { name, exact: true }).click(),
    waitFor: (role, name) => page.getByRole(role, { name, exact: true }).waitFor(),
    waitText: (text) => page.getByText(text).first().waitFor(),
    attribute: (name, attr) => field(name).getAttribute(attr),
    textOf: (selector) => page.locator(selector).innerText(),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    setViewport: (width, height) => page.setViewportSize({ width, height }),
    screenshot: (file) => page.screenshot({ path: file, fullPage: true }),
  };
}

// In the page: visible elements of a role whose label or text is `name` (a first cut that the
// engine's own computed accessible name then confirms).
function candidates(role, name) {
  const selector = { field: 'input, select, textarea', button: 'button', link: 'a[href]', heading: 'h1, h2, h3' }[role];
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const label = (el) => el.getAttribute('aria-label') || (el.labels?.length ? [...el.labels].map((l) => l.textContent).join(' ') : el.textContent);
  return [...document.querySelectorAll(selector)].filter((el) => el.getClientRects().length > 0 && norm(label(el)) === name);
}

// WebDriver finds by the name WebKit itself computes (GET .../computedlabel), clicks and types
// as a user would (element click, element send keys), and waits by polling.
export function webdriverUi(session) {
  async function poll(what, probe) {
    const end = Date.now() + TIMEOUT;
    for (;;) {
      const found = await probe();
      if (found) return found;
      if (Date.now() > end) throw new Error(`WebKit: no ${what} after ${TIMEOUT} ms`);
      await sleep(50);
    }
  }
  const find = (role, name) => poll(`${role} named "${name}"`, async () => {
    for (const el of await session.script(candidates, role, name)) {
      const id = el[ELEMENT];
      if (await session.cmd('GET', `/element/${id}/computedlabel`) === name) return id;
    }
    return null;
  });
  return {
    goto: (url) => session.goto(url),
    async fill(name, value) {
      const id = await find('field', name);
      await session.cmd('POST', `/element/${id}/clear`, {});
      await session.cmd('POST', `/element/${id}/value`, { text: value });
    },
    async select(name, value) {
      const id = await find('field', name);
      // The options may still be on their way (the console loads a select's choices after the
      // form shows), as a user would wait for them.
      const css = `option[value="${value}"]`;
      const option = await poll(`option "${value}" of "${name}"`,
        () => session.cmd('POST', `/element/${id}/elements`, { using: 'css selector', value: css })
          .then((found) => found[0]));
      await session.cmd('POST', `/element/${option[ELEMENT]}/click`, {});
    },
    // A checkbox is checked as a user checks it: a click.
    check: (name) => find('field', name).then((id) => session.cmd('POST', `/element/${id}/click`, {})),
    async click(role, name) {
      const id = await find(role, name);
      // Centred first: WebKit's own scrolling put a button at the phone screen's bottom edge,
      // where its click did not reach it.
      await session.script((el) => el.scrollIntoView({ block: 'center' }), { [ELEMENT]: id });
      await session.cmd('POST', `/element/${id}/click`, {});
    },
    waitFor: (role, name) => find(role, name),
    waitText: (text) => poll(`text "${text}"`, () => session.script((t) => document.body.innerText.includes(t), text)),
    async attribute(name, attr) {
      return session.cmd('GET', `/element/${await find('field', name)}/attribute/${attr}`);
    },
    async textOf(selector) {
      const el = await poll(selector, () => session.script((s) => document.querySelector(s), selector));
      return session.cmd('GET', `/element/${el[ELEMENT]}/text`);
    },
    evaluate: (fn, arg) => session.script(fn, arg),
    setViewport: (width, height) => session.setViewport(width, height),
    screenshot: (file) => session.screenshot(file),
  };
}
