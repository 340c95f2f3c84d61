// WebKit (Safari's engine) as WebKitGTK's MiniBrowser, driven by Debian's WebKitWebDriver over
// plain W3C WebDriver HTTP with node's fetch: a dozen endpoints, so no client library to pin.
// WebKitGTK 2.50's MiniBrowser has no headless mode, so it draws on a private Xvfb display
// (`-displayfd` picks a free one). A private XDG_CONFIG_HOME carries a gtk.css that shrinks
// MiniBrowser's toolbar, whose natural width (447 px) would keep the window wider than a phone.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, sleep } from './harness.mjs';

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'; // the W3C web element identifier

function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    xvfb.stdio[3].on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ xvfb, display: `:${out.trim()}` });
    });
    xvfb.on('exit', (code) => reject(new Error(`Xvfb exited (${code}) before it reported a display`)));
  });
}

// One WebDriver session: commands as HTTP requests, errors as exceptions with the driver's words.
class WebKitSession {
  constructor(base, id) {
    this.url = `${base}/session/${id}`;
  }

  async cmd(method, route, body) {
    const r = await fetch(`${this.url}${route}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const { value } = await r.json();
    if (!r.ok) throw new Error(`WebDriver ${method} ${route}: ${value?.error}: ${value?.message}`);
    return value;
  }

  script(fn, ...args) {
    return this.cmd('POST', '/execute/sync', { script: `return (${fn}).apply(null, arguments)`, args });
  }

  goto(url) {
    return this.cmd('POST', '/url', { url });
  }

  // The outer window sized so that the page's viewport is width x height (the window's own
  // parts, MiniBrowser's shrunken toolbar, are measured on the way).
  async setViewport(width, height) {
    let want = { width, height };
    for (let i = 0; i < 5; i++) {
      const got = await this.cmd('POST', '/window/rect', want);
      const [w, h] = await this.settledViewport(got);
      if (w === width && h === height) return;
      want = { width: got.width + width - w, height: got.height + height - h };
    }
    throw new Error(`WebKit: the viewport did not become ${width}x${height}`);
  }

  // The page sees a resize a little after the window has it (X without a window manager): the
  // viewport once it fits the window's new size and holds still.
  async settledViewport(win) {
    let last = [];
    for (let i = 0; i < 60; i++) {
      const [w, h] = await this.script(() => [innerWidth, innerHeight]);
      const fits = w <= win.width && h <= win.height && win.width - w < 100 && win.height - h < 100;
      if (fits && w === last[0] && h === last[1]) return last;
      last = [w, h];
      await sleep(50);
    }
    return last;
  }

  async screenshot(file) {
    writeFileSync(file, Buffer.from(await this.cmd('GET', '/screenshot'), 'base64'));
  }

  async quit() {
    await this.cmd('DELETE', '').catch(() => {});
  }
}

// Starts Xvfb, WebKitWebDriver and a MiniBrowser session in a temp dir; `close()` stops all
// three and removes it.
export async function launchWebKit() {
  const work = mkdtempSync(path.join(tmpdir(), 'refgate-webkit-'));
  const config = path.join(work, 'webkit-config');
  mkdirSync(path.join(config, 'gtk-3.0'), { recursive: true });
  writeFileSync(path.join(config, 'gtk-3.0', 'gtk.css'),
    '* { font-size: 1px; min-width: 0; min-height: 0; padding: 0; margin: 0; border-width: 0; }\n');
  const { xvfb, display } = await startXvfb();
  const port = await freePort();
  const driver = spawn('WebKitWebDriver', [`--port=${port}`], {
    stdio: 'ignore',
    env: {
      ...process.env,
      DISPLAY: display,
      XDG_CONFIG_HOME: config,
      XDG_CACHE_HOME: path.join(work, 'webkit-cache'),
      XDG_DATA_HOME: path.join(work, 'webkit-data'),
      NO_AT_BRIDGE: '1',
      // A Debian system with no locale set up (CI's): WebKitGTK then reports navigator.language
      // "C", which the console must survive (src/console/web/src/locale.js).
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
    },
  });
  const close = async () => {
    for (const child of [driver, xvfb]) {
      if (child.exitCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((r) => {
        const t = setTimeout(() => (child.kill('SIGKILL'), r()), 5000);
        child.on('exit', () => (clearTimeout(t), r()));
      });
    }
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const base = `http://127.0.0.1:${port}`;
    let created;
    for (let i = 0; i < 100 && !created; i++) {
      created = await fetch(`${base}/session`, {
        method: 'POST',
        body: JSON.stringify({ capabilities: { alwaysMatch: { browserName: 'MiniBrowser' } } }),
      }).then((r) => r.json(), () => null);
      if (!created) await sleep(50);
    }
    if (!created?.value?.sessionId) throw new Error(`WebKitWebDriver made no session: ${JSON.stringify(created)}`);
    const session = new WebKitSession(base, created.value.sessionId);
    session.version = created.value.capabilities.browserVersion;
    session.close = async () => (await session.quit(), await close());
    return session;
  } catch (e) {
    await close();
    throw e;
  }
}

export { ELEMENT };
