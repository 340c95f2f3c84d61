// The console's first page after sign-in: today's clicks per class against the same hours
// yesterday, what is being clicked right now (GET /stats/live, polled), what needs attention, and
// the top links of today and of the week. Every figure is a count; nothing about a reader.
import { useEffect, useState } from 'preact/hooks';
import { api, enc, query } from '../api.js';
import { Notice, PageTitle, Table, showTime, useLoad } from '../ui.jsx';

const kPollMs = 3000;
const kDay = 86400e3;
const CLASSES = ['human', 'bot', 'prefetch', 'scanner'];
// The confirmed health states other than ok (GET /links?health=).
const BAD_HEALTH = ['broken', 'code_dropped', 'homepage', 'moved', 'unavailable', 'redirect_loop', 'refused'];

const day = (d) => d.toISOString().slice(0, 10);
const linkHref = (slug) => `#/links/${enc(slug)}`;
// A link's page holds its stats.
const statsHref = linkHref;

function change(now, before) {
  if (!before) return now ? 'new today' : 'no change';
  const pct = Math.round(((now - before) / before) * 100);
  return pct === 0 ? 'no change' : `${pct > 0 ? '+' : '−'}${Math.abs(pct)}%`;
}

// Polls the live figures every few seconds while the page is shown; keeps the last answer on a
// failed poll (and says so).
function useLive() {
  const [state, setState] = useState({ live: null, error: null });
  useEffect(() => {
    let stop = false;
    let timer;
    const poll = async () => {
      // Not while the tab is hidden: nobody reads it, and every poll counts as use of the session.
      if (document.hidden) {
        timer = setTimeout(poll, kPollMs);
        return;
      }
      try {
        const { data } = await api('GET', '/stats/live');
        if (!stop) setState({ live: data, error: null });
      } catch (error) {
        if (!stop) setState((s) => ({ live: s.live, error }));
      }
      if (!stop) timer = setTimeout(poll, kPollMs);
    };
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, []);
  return state;
}

function TodayByClass({ live }) {
  if (!live) return null;
  return (
    <Table caption="Clicks today (UTC) by class, against the same hours yesterday"
      head={['Class', 'Today', 'Same hours yesterday', 'Change']}
      rows={CLASSES.map((c) => [c, live.today[c], live.yesterday_same_hours[c], change(live.today[c], live.yesterday_same_hours[c])])} />
  );
}

function RightNow({ live, error }) {
  return (
    <section class="card" aria-labelledby="right-now-title">
      <h2 id="right-now-title">Right now</h2>
      <p class="hint">Human clicks per link over the last {live ? Math.round(live.window_seconds / 60) : 5} minutes, updated every few seconds.</p>
      {error && <Notice error={error} />}
      <div aria-live="polite">
        {live && (live.links.length
          ? <ul class="live-links">
              {live.links.map((l) => (
                <li key={l.link}><a href={statsHref(l.link)}>{l.link}</a>: {l.human_clicks} human {l.human_clicks === 1 ? 'click' : 'clicks'}</li>
              ))}
            </ul>
          : <p>No human clicks in the last minutes.</p>)}
      </div>
    </section>
  );
}

// Everything that needs an editor: each item names what and links to where it is fixed. A source
// the server does not offer (no commission store, no `serving` field) is left out quietly.
async function loadAttention() {
  const items = [];
  const soft = (p) => p.then((r) => r.data, () => null);
  const now = Date.now();
  const [health, expiring, partners, epc, links] = await Promise.all([
    Promise.all(BAD_HEALTH.map((h) => soft(api('GET', `/links${query({ health: h, limit: 50 })}`)))),
    soft(api('GET', `/links${query({ expiring_within_days: 14, limit: 50 })}`)),
    soft(api('GET', '/partners?limit=200')),
    soft(api('GET', '/stats/earnings/attention?days=7')),
    soft(api('GET', '/links?limit=200')),
  ]);
  const unhealthy = new Map();
  for (const page of health) for (const l of page?.items || []) unhealthy.set(l.slug, l);
  const slugs = [...unhealthy.keys()].slice(0, 20);
  const details = await Promise.all(slugs.map((slug) => soft(api('GET', `/links/${enc(slug)}/health`))));
  details.forEach((h, i) => {
    if (!h || !h.state || h.state === 'ok') return;
    const slug = slugs[i];
    const branches = (h.branches || []).filter((b) => b.state !== 'ok').map((b) => b.branch);
    const where = branches.length ? ` on branch ${branches.join(', ')}` : h.branch ? ` on branch ${h.branch}` : '';
    items.push({ key: `health-${slug}`, href: linkHref(slug), text: `${slug}: health ${h.state}${h.detail ? ` (${h.detail})` : ''}${where}` });
  });
  for (const l of expiring?.items || []) {
    items.push({ key: `expiry-${l.slug}`, href: linkHref(l.slug), text: `${l.slug}: expires ${showTime(l.expires_at)}` });
  }
  for (const p of partners?.items || []) {
    for (const code of p.scheduled_codes || []) {
      const at = Date.parse(code.valid_from);
      if (!(at >= now && at <= now + 7 * kDay)) continue;
      const what = code.ref_code ? `code switches to ${code.ref_code}` : 'channel codes switch';
      items.push({ key: `switch-${p.slug}-${code.valid_from}`, href: `#/partners/${enc(p.slug)}`, text: `${p.name || p.slug}: ${what} at ${showTime(code.valid_from)}` });
    }
  }
  for (const l of links?.items || []) {
    if (l.serving && l.serving !== 'destination') {
      items.push({ key: `serving-${l.slug}`, href: linkHref(l.slug), text: `${l.slug}: serving its ${l.serving}` });
    }
  }
  for (const e of epc?.items || []) {
    items.push({ key: `epc-${e.link}`, href: linkHref(e.link), text: `${e.link}: earnings per click fell to zero (last earned ${e.last_earning_day || 'before the window'})` });
  }
  return items;
}

function NeedsAttention() {
  const [items, error] = useLoad(loadAttention, []);
  return (
    <section class="card" aria-labelledby="attention-title">
      <h2 id="attention-title">Needs attention</h2>
      <Notice error={error} />
      {items && (items.length
        ? <ul class="attention">{items.map((i) => <li key={i.key}><a href={i.href}>{i.text}</a></li>)}</ul>
        : <p>Nothing needs attention.</p>)}
    </section>
  );
}

function TopLinks() {
  const [data, error] = useLoad(async () => {
    const today = new Date();
    const to = day(today);
    const [t, w] = await Promise.all([
      api('GET', `/stats/top${query({ from: to, to, limit: 5 })}`),
      api('GET', `/stats/top${query({ from: day(new Date(today.getTime() - 6 * kDay)), to, limit: 5 })}`),
    ]);
    return { today: t.data.items, week: w.data.items };
  }, []);
  const rows = (items) => items.map((l) => [<a href={statsHref(l.link)}>{l.link}</a>, l.partner, l.human]);
  return (
    <section class="card" aria-labelledby="top-title">
      <h2 id="top-title">Top links</h2>
      <Notice error={error} />
      {data && (
        <>
          <Table caption="Top links today" head={['Link', 'Partner', 'Human clicks']} empty="No clicks today yet." rows={rows(data.today)} />
          <Table caption="Top links this week" head={['Link', 'Partner', 'Human clicks']} empty="No clicks in the last 7 days." rows={rows(data.week)} />
        </>
      )}
    </section>
  );
}

export function Home() {
  const { live, error } = useLive();
  return (
    <>
      <PageTitle>Today</PageTitle>
      <TodayByClass live={live} />
      <RightNow live={live} error={error} />
      <NeedsAttention />
      <TopLinks />
    </>
  );
}
