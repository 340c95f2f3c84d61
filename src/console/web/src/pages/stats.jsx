import uPlot from 'uplot';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { Field, Notice, PageTitle, Table, csv, downloadText, useLoad } from '../ui.jsx';

const day = (d) => d.toISOString().slice(0, 10);
const dayOf = (seconds) => day(new Date(seconds * 1000));
const palette = ['#1f5fbf', '#b3261e', '#6b4c00', '#0b7a3e', '#7a1fa2', '#005f73', '#9c4221'];

// A uPlot chart of one series per column over the days, with its table and CSV beside it. A
// series' `value` fills the table; its `plot`, when given, the chart (exact decimal strings in the
// table, their numbers drawn).
export function Chart({ id, title, days, series, unit = 'clicks' }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current) return undefined;
    const xs = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
    const width = Math.max(280, Math.min(box.current.clientWidth || 600, 900));
    const plot = new uPlot({
      width, height: 240,
      // UTC days as plain numbers, so ticks fall on UTC midnights whatever the browser's zone.
      scales: { x: { time: false } },
      series: [{ label: 'Day', value: (u, v) => (v == null ? '--' : dayOf(v)) },
        ...series.map((s, i) => ({ label: s.label, stroke: palette[i % palette.length], width: 2 }))],
      axes: [{ incrs: [86400, 7 * 86400, 28 * 86400], values: (u, vals) => vals.map(dayOf) }, { label: unit }],
    }, [xs, ...series.map((s) => days.map(s.plot || s.value))], box.current);
    return () => plot.destroy();
  }, [days, series, unit]);
  const head = ['Day', ...series.map((s) => s.label)];
  const rows = days.map((d, i) => [d.day, ...series.map((s) => s.value(d, i))]);
  return (
    <figure class="chart" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <div ref={box} class="plot" role="img" aria-label={`${title}: chart; the table below has the same figures`} />
      <details>
        <summary>Table view: {title}</summary>
        <Table caption={title} head={head} rows={rows} />
      </details>
      <button type="button" class="secondary" onClick={() => downloadText(`${id}.csv`, csv([head, ...rows]))}>
        Download CSV: {title}
      </button>
    </figure>
  );
}

// "0": the link's own destination; "3": its third rule; "4.2": the second branch of its fourth
// rule's split.
function branchName(rule) {
  if (rule === '0') return 'link destination (no rule matched)';
  const [n, b] = rule.split('.');
  return b ? `rule ${n}, split branch ${b}` : `rule ${n}`;
}

const classCells = (r) => [r.human, r.bot, r.prefetch, r.scanner || 0];

// One link's clicks per reader country and per rule branch (links with targeting rules).
function LinkBreakdown({ range }) {
  const [slug, setSlug] = useState('');
  const [shownSlug, setShownSlug] = useState('');
  const [data, error] = useLoad(async () => (shownSlug
    ? (await api('GET', `/stats/links/${encodeURIComponent(shownSlug)}${query(range)}`)).data
    : null), [shownSlug, range.from, range.to]);
  const head = ['Human', 'Bot', 'Prefetch', 'Scanner'];
  return (
    <section class="card" aria-labelledby="breakdown-title">
      <h2 id="breakdown-title">Targeted link: clicks by country and by rule</h2>
      <form class="filters" onSubmit={(e) => (e.preventDefault(), setShownSlug(slug.trim()))}>
        <Field id="breakdown-link" label="Link (slug)" value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
        <button type="submit">Show breakdown</button>
      </form>
      <Notice error={error} />
      {data && !data.by_country && <p>{data.link} has no targeting rules: its clicks are not broken down.</p>}
      {data && data.by_country && (
        <>
          <Table caption={`Clicks by country: ${data.link}`} head={['Country', ...head]}
            empty="No clicks counted by country in this range (counted where a country database is configured)."
            rows={data.by_country.map((r) => [r.country, ...classCells(r)])} />
          <Table caption={`Clicks by rule branch: ${data.link}`} head={['Branch', ...head]}
            empty="No clicks counted by rule in this range."
            rows={data.by_rule.map((r) => [branchName(r.rule), ...classCells(r)])} />
        </>
      )}
    </section>
  );
}

// The period of the same length just before `range` ({from, to} UTC days, both inclusive).
export function periodBefore(range) {
  const from = Date.parse(`${range.from}T00:00:00Z`);
  const to = Date.parse(`${range.to}T00:00:00Z`);
  const length = Math.round((to - from) / 86400e3) + 1;
  return { from: day(new Date(from - length * 86400e3)), to: day(new Date(from - 86400e3)) };
}

// "+12% on the period before", "new", "no change": a total beside the one before it.
export function changeText(now, before) {
  if (!before) return now ? 'none in the period before' : 'no change';
  const pct = Math.round(((now - before) / before) * 100);
  return pct === 0 ? 'no change on the period before' : `${pct > 0 ? '+' : '−'}${Math.abs(pct)}% on the period before`;
}

// A total with the period before's beside it.
export function Compared({ label, now, before }) {
  return <li>{label}: {now} (period before: {before}; {changeText(now, before)})</li>;
}

export const UNIQUES_NOTE = 'Each day\'s figure estimates the readers of that day; a reader who came back on another day is counted again, so adding the days up is not a count of distinct readers over the range.';

export function Stats() {
  const today = new Date();
  const [range, setRange] = useState({ from: day(new Date(today.getTime() - 29 * 86400e3)), to: day(today) });
  const [data, error] = useLoad(async () => {
    const q = query(range);
    const [overview, previous, links, partners] = await Promise.all([
      api('GET', `/stats/overview${q}`), api('GET', `/stats/overview${query(periodBefore(range))}`),
      api('GET', `/stats/top${query({ ...range, limit: 10 })}`),
      api('GET', `/stats/top${query({ ...range, by: 'partner' })}`),
    ]);
    return { overview: overview.data, previous: previous.data, links: links.data.items, partners: partners.data.items };
  }, [range.from, range.to]);
  const set = (k) => (e) => e.currentTarget.value && setRange({ ...range, [k]: e.currentTarget.value });
  const channels = data ? [...new Set(data.overview.days.flatMap((d) => Object.keys(d.human_by_channel || {})))].sort() : [];
  return (
    <>
      <PageTitle>Stats</PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Field id="stats-from" type="date" label="From (UTC day)" value={range.from} onChange={set('from')} />
        <Field id="stats-to" type="date" label="To (UTC day)" value={range.to} onChange={set('to')} />
      </form>
      <Notice error={error} />
      {data && (
        <>
          <p role="status">
            Totals: {data.overview.totals.human} human, {data.overview.totals.bot} bot, {data.overview.totals.prefetch} prefetch, {data.overview.totals.scanner || 0} scanner clicks.
          </p>
          <ul class="compared" aria-label={`Against the period before (${data.previous.from} to ${data.previous.to})`}>
            {['human', 'bot', 'prefetch'].map((c) => <Compared label={`${c} clicks`} now={data.overview.totals[c]} before={data.previous.totals[c]} />)}
          </ul>
          <Chart id="by-class" title="Clicks per day by class" days={data.overview.days} series={[
            { label: 'human', value: (d) => d.human }, { label: 'bot', value: (d) => d.bot },
            { label: 'prefetch', value: (d) => d.prefetch }, { label: 'scanner', value: (d) => d.scanner || 0 },
            { label: 'human, period before', value: (d, i) => data.previous.days[i]?.human ?? 0 }]} />
          <Chart id="by-channel" title="Human clicks per day by channel" days={data.overview.days}
            series={(channels.length ? channels : ['direct']).map((c) => ({ label: c, value: (d) => (d.human_by_channel || {})[c] || 0 }))} />
          <Chart id="uniques" title="Unique readers per day (estimate)" days={data.overview.days}
            series={[{ label: 'unique estimate', value: (d) => d.unique_estimate }]} />
          <p class="hint">{UNIQUES_NOTE} Here each link's estimates are added too: a reader of two links counts twice.</p>
          <Table caption="Top links" head={['Link', 'Partner', 'Human', 'Bot', 'Prefetch', 'Scanner']} empty="No clicks in this range."
            rows={data.links.map((l) => [<a href={`#/links/${encodeURIComponent(l.link)}${l.domain ? `/${encodeURIComponent(l.domain)}` : ''}`}>{l.domain ? `${l.domain}/${l.link}` : l.link}</a>, l.partner, l.human, l.bot, l.prefetch, l.scanner || 0])} />
          <Table caption="Top partners" head={['Partner', 'Human', 'Bot', 'Prefetch', 'Scanner']} empty="No clicks in this range."
            rows={data.partners.map((p) => [p.partner, p.human, p.bot, p.prefetch, p.scanner || 0])} />
        </>
      )}
      <LinkBreakdown range={range} />
    </>
  );
}

// A link's own stats on its page: the last 30 days against the 30 before (totals and a second
// series), and its daily unique estimates, labelled for what they are.
export function LinkStats({ slug, domain }) {
  const [data, error] = useLoad(async () => {
    const today = new Date();
    const range = { from: day(new Date(today.getTime() - 29 * 86400e3)), to: day(today) };
    // The link on its own domain (issue 46): the same slug may be taken on another.
    const [now, before] = await Promise.all([
      api('GET', `/stats/links/${encodeURIComponent(slug)}${query({ ...range, domain })}`),
      api('GET', `/stats/links/${encodeURIComponent(slug)}${query({ ...periodBefore(range), domain })}`),
    ]);
    return { now: now.data, before: before.data };
  }, [slug, domain]);
  return (
    <section class="card" aria-labelledby="link-stats-title">
      <h2 id="link-stats-title">Stats: the last 30 days</h2>
      <Notice error={error} />
      {data && (
        <>
          <ul class="compared" aria-label={`Against the 30 days before (${data.before.from} to ${data.before.to})`}>
            {['human', 'bot', 'prefetch'].map((c) => <Compared label={`${c} clicks`} now={data.now.totals[c]} before={data.before.totals[c]} />)}
          </ul>
          <Chart id="link-human" title={`Human clicks per day: ${slug}`} days={data.now.days} series={[
            { label: 'human', value: (d) => d.human },
            { label: 'human, 30 days before', value: (d, i) => data.before.days[i]?.human ?? 0 }]} />
          <Chart id="link-uniques" title={`Unique readers per day (estimate): ${slug}`} days={data.now.days}
            series={[{ label: 'unique estimate', value: (d) => d.unique_estimate }]} />
          <p class="hint">{UNIQUES_NOTE}</p>
        </>
      )}
    </section>
  );
}
