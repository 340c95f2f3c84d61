// A private refgate for one browser test file: its own database (created on the suite's
// PostgreSQL as tests/support/test_database.cpp does), its own redis-server on a free port,
// migrated, the demo data imported, three users, and `refgate serve` on ports the kernel picks.
// Needs REFGATE_BIN and REFGATE_TEST_DATABASE_URL (exported by deploy/local/test.sh).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium, firefox } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../../..');

function need(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set (deploy/local/test.sh exports it)`);
  return value;
}

// Passwords that pass the console's policy (12 characters or more, without the user's name).
export const USERS = {
  editor: { name: 'erin', password: 'harbour lights 1', role: 'editor' },
  editor2: { name: 'eddie', password: 'copper kettle 2', role: 'editor' },
  viewer: { name: 'vera', password: 'paper lantern 3', role: 'viewer' },
  admin: { name: 'ada', password: 'granite tower 4', role: 'admin' },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export class Stack {
  constructor() {
    this.bin = need('REFGATE_BIN');
    this.adminDbUrl = need('REFGATE_TEST_DATABASE_URL');
    this.psqlBin = path.join(process.env.REFGATE_TEST_PG_BINDIR || '/usr/lib/postgresql/15/bin', 'psql');
    this.work = mkdtempSync(path.join(tmpdir(), 'refgate-browser-'));
    this.dbName = `refgate_browser_${randomBytes(6).toString('hex')}`;
    this.dbUrl = withDatabase(this.adminDbUrl, this.dbName);
    this.children = [];
    this.log = path.join(this.work, 'refgate.log');
  }

  psql(sql, url = this.dbUrl) {
    const r = spawnSync(this.psqlBin, ['-X', '-qtA', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
    return r.stdout.trim();
  }

  refgate(args, { input, env = {} } = {}) {
    const r = spawnSync(this.bin, args, {
      encoding: 'utf8',
      input,
      env: { ...process.env, ...this.env, ...env },
    });
    if (r.status !== 0) throw new Error(`refgate ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
    return r.stdout;
  }

  async start(env = {}) {
    // A copy of the migrated database test.sh makes (REFGATE_TEST_TEMPLATE_DATABASE), as the C++
    // tests' databases are; `refgate migrate` then has nothing to do.
    const template = process.env.REFGATE_TEST_TEMPLATE_DATABASE;
    this.psql(`CREATE DATABASE ${this.dbName}${template ? ` TEMPLATE "${template}"` : ''}`, this.adminDbUrl);
    const redisPort = await freePort();
    const redis = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(redisPort), '--dir', this.work,
      '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.children.push(redis);
    this.env = {
      REFGATE_DATABASE_URL: this.dbUrl,
      REFGATE_REDIS_URL: `redis://127.0.0.1:${redisPort}/0`,
      ASAN_OPTIONS: 'detect_leaks=0',
    };
    for (let i = 0; i < 100; i++) {
      if (spawnSync('redis-cli', ['-p', String(redisPort), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') break;
      await sleep(50);
    }
    this.refgate(['migrate']);
    this.refgate(['import', path.join(ROOT, 'deploy/local/demo.json')]);
    for (const u of Object.values(USERS)) {
      this.refgate(['user', 'create', '--name', u.name, '--role', u.role, '--password-stdin'], { input: `${u.password}\n` });
    }
    await this.serve(env);
    return this;
  }

  async serve(env) {
    const { openSync } = await import('node:fs');
    const out = openSync(this.log, 'a');
    const child = spawn(this.bin, ['serve'], {
      stdio: ['ignore', out, out],
      env: {
        ...process.env,
        ...this.env,
        REFGATE_LISTEN: '127.0.0.1:0',
        REFGATE_ADMIN_LISTEN: '127.0.0.1:0',
        REFGATE_THREADS: '2',
        REFGATE_DRAIN_MS: '0',
        REFGATE_SNAPSHOT_FILE: path.join(this.work, 'snapshot.json'),
        REFGATE_SPILL_FILE: path.join(this.work, 'spill.json'),
        REFGATE_PUBLIC_BASE_URL: 'https://picks.example.com',
        REFGATE_AGGREGATION_WINDOW_MS: '100',
        REFGATE_FLUSH_INTERVAL_MS: '1000',
        ...env,
      },
    });
    this.children.push(child);
    this.serveProcess = child;
    const ports = {};
    for (let i = 0; i < 300 && !(ports.public && ports.admin); i++) {
      if (child.exitCode !== null) throw new Error(`refgate serve exited:\n${this.tail()}`);
      for (const line of readFileSync(this.log, 'utf8').split('\n')) {
        if (!line.includes('"msg":"listening"')) continue;
        const m = line.match(/"port":(\d+)/);
        if (line.includes('"listener":"public"')) ports.public = Number(m[1]);
        if (line.includes('"listener":"admin"')) ports.admin = Number(m[1]);
      }
      await sleep(50);
    }
    if (!ports.public) throw new Error(`refgate serve reported no ports:\n${this.tail()}`);
    this.publicUrl = `http://127.0.0.1:${ports.public}`;
    this.adminUrl = `http://127.0.0.1:${ports.admin}`;
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`${this.adminUrl}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
      await sleep(100);
    }
  }

  // A country database of the stack's own for REFGATE_GEOIP_DB: `ranges` as [first, last,
  // country code] address ranges, converted by the build's MMDB tool (REFGATE_MMDB_TOOL, the
  // one that makes the data set's database) into a file in the stack's folder.
  countryDatabase(ranges) {
    const csv = path.join(this.work, 'country.csv');
    writeFileSync(csv, ranges.map((r) => r.join(',')).join('\n') + '\n');
    const file = path.join(this.work, 'country.mmdb');
    const r = spawnSync(need('REFGATE_MMDB_TOOL'), ['--country', file, 'the browser tests\' countries', csv],
      { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' } });
    if (r.status !== 0) throw new Error(`the MMDB tool failed (${r.status}): ${r.stderr}`);
    return file;
  }

  tail() {
    try {
      return readFileSync(this.log, 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      return '';
    }
  }

  async stop() {
    for (const child of this.children.reverse()) {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => {
          const t = setTimeout(() => (child.kill('SIGKILL'), r()), 10000);
          child.on('exit', () => (clearTimeout(t), r()));
        });
      }
    }
    try {
      this.psql(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`, this.adminDbUrl);
    } catch {
      // A leftover database in the throwaway test cluster harms nothing.
    }
    rmSync(this.work, { recursive: true, force: true });
  }
}

// One stack and one browser for a test file: started before its first test, stopped after its
// last; `use(stack, browser)` hands them to the file once they run. `launch` picks the browser
// (Chromium by default; null for none, when the file starts its own). `env(stack)` gives more
// settings for `refgate serve` (it may write files into `stack.work`).
export function useStack(use, { launch = launchBrowser, env = () => ({}) } = {}) {
  let stack;
  let browser;
  before(async () => {
    // The browser starts while refgate does: both take seconds.
    stack = new Stack();
    const [started, launched] = await Promise.allSettled([(async () => stack.start(env(stack)))(),
      (async () => launch?.())()]);
    browser = launched.value;
    for (const r of [started, launched]) if (r.status === 'rejected') throw r.reason;
    use(stack, browser);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.REFGATE_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

// Debian's Firefox ESR, driven by playwright-core over WebDriver BiDi (the `moz-firefox` channel
// speaks BiDi to a stock Firefox instead of Playwright's own patched build), headless.
export async function launchFirefox() {
  return firefox.launch({
    channel: 'moz-firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
  });
}

// A fresh context per person, signed in through the form as a person would.
export async function signIn(browser, stack, user, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  context.setDefaultTimeout(10000);
  const page = await context.newPage();
  await page.goto(`${stack.adminUrl}/console/`);
  await page.getByLabel('Name', { exact: true }).fill(user.name);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return { context, page };
}

const artifacts = path.resolve(ROOT, process.env.REFGATE_TEST_ARTIFACTS || 'build/test/artifacts', 'console');

// Where a screenshot named `name` goes (the folder is made on the way).
export function artifactPath(name) {
  mkdirSync(artifacts, { recursive: true });
  return path.join(artifacts, `${name}.png`);
}

// The page at desktop and at phone width, into the test artifacts.
export async function screenshots(page, name) {
  mkdirSync(artifacts, { recursive: true });
  const size = page.viewportSize();
  await page.screenshot({ path: path.join(artifacts, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(artifacts, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
  await page.waitForTimeout(100);
  return path.join(artifacts, `${name}-desktop.png`);
}

// The README's screenshot is refreshed on request only (REFGATE_UPDATE_README_SCREENSHOT=1), so
// that a test run leaves the source tree as it found it.
export function copyToDocs(file, name) {
  if (process.env.REFGATE_UPDATE_README_SCREENSHOT !== '1') return;
  mkdirSync(path.join(ROOT, 'docs/images'), { recursive: true });
  copyFileSync(file, path.join(ROOT, 'docs/images', name));
}

const axeSource = readFileSync(path.join(here, '../node_modules/axe-core/axe.min.js'), 'utf8');

// axe-core in the page (evaluated through the DevTools protocol, which the CSP does not govern):
// the serious and critical violations, as readable lines.
export async function seriousViolations(page) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).join(', ')})`);
}

// A click on /go/<slug> as a reader's browser makes it (counted as human).
export async function click(stack, slug, query = '') {
  const r = await fetch(`${stack.publicUrl}/go/${slug}${query}`, {
    redirect: 'manual',
    headers: {
      'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
      Accept: 'text/html,application/xhtml+xml',
      'Accept-Language': 'en',
    },
  });
  return { status: r.status, location: r.headers.get('location') };
}

// Clicks /go/<slug> until `accept(answer)` holds or `ms` pass (a write reaches every instance's
// redirects within a second, by LISTEN/NOTIFY); returns the last answer.
export async function clickUntil(stack, slug, accept, ms = 1000) {
  const start = Date.now();
  let answer = await click(stack, slug);
  while (!accept(answer) && Date.now() - start < ms) {
    await sleep(50);
    answer = await click(stack, slug);
  }
  return answer;
}

export { sleep };
