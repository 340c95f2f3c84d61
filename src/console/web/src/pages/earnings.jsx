import { useState } from 'preact/hooks';
import { api, enc, query } from '../api.js';
import { CopyField, Field, Notice, PageTitle, Table, downloadText, useLoad } from '../ui.jsx';
import { Chart } from './stats.jsx';

// Earnings (issue 43): GET /stats/earnings beside the clicks, per currency, never summed across
// currencies. Amounts stay the API's exact decimal strings; sums and comparisons are done on
// integers (BigInt units and a scale), never in floating point.

const STATUSES = ['pending', 'approved', 'reversed', 'paid'];
const day = (d) => d.toISOString().slice(0, 10);

function decimal(text) {
  const [whole, fraction = ''] = String(text ?? '0').split('.');
  return { units: BigInt(`${whole || '0'}${fraction}`), scale: fraction.length };
}
const widen = (d, scale) => d.units * 10n ** BigInt(scale - d.scale);
function format(units, scale) {
  if (!scale) return units.toString();
  const digits = units.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
// The exact sum of decimal strings, at the largest scale among them ("2.50" + "10.00" = "12.50").
export function sum(...texts) {
  const ds = texts.map(decimal);
  const scale = Math.max(0, ...ds.map((d) => d.scale));
  return format(ds.reduce((acc, d) => acc + widen(d, scale), 0n), scale);
}
function compare(a, b) {
  const [x, y] = [decimal(a), decimal(b)];
  const scale = Math.max(x.scale, y.scale);
  const [u, v] = [widen(x, scale), widen(y, scale)];
  return u < v ? -1 : u > v ? 1 : 0;
}

// What an item earned in one currency: pending + approved + paid (a reversal earns nothing).
const earned = (amount) => (amount ? sum(amount.pending, amount.approved, amount.paid) : '0');
const currenciesOf = (items) => [...new Set(items.flatMap((i) => Object.keys(i.amount || {})))].sort();
const conversionsText = (c) => STATUSES.map((s) => `${c[s]} ${s}`).join(', ');
const epcText = (epc) => (epc === null || epc === undefined ? '—' : epc);

function daysBetween(from, to) {
  const out = [];
  for (let t = Date.parse(`${from}T00:00:00Z`), end = Date.parse(`${to}T00:00:00Z`); t <= end && out.length < 400; t += 86400e3) {
    out.push(day(new Date(t)));
  }
  return out;
}

// The items with an amount in `currency`, the best `limit` by EPC or by amount earned.
function top(items, currency, by, limit = 10) {
  const rows = items.filter((i) => i.amount && i.amount[currency]);
  const key = by === 'epc' ? (i) => (i.epc || {})[currency] : (i) => earned(i.amount[currency]);
  return rows
    .filter((i) => key(i) !== null && key(i) !== undefined)
    .sort((a, b) => compare(key(b), key(a)) || String(a.link).localeCompare(String(b.link)))
    .slice(0, limit);
}

const linkCell = (slug) => <a href={`#/links/${enc(slug)}`}>{slug}</a>;
const figures = (i, c) => [i.human_clicks, earned(i.amount[c]), i.amount[c].reversed, epcText((i.epc || {})[c])];
const figureHead = ['Human clicks', 'Earned (pending + approved + paid)', 'Reversed', 'EPC'];

function CurrencySection({ currency, links, placements, days, range }) {
  const amounts = links.filter((i) => i.amount && i.amount[currency]).map((i) => i.amount[currency]);
  const total = (s) => sum(...amounts.map((a) => a[s]));
  const byDay = new Map(days.map((d) => [d.day, d]));
  const chartDays = daysBetween(range.from, range.to).map((d) => ({ day: d, item: byDay.get(d) }));
  const dayAmount = (d) => (d.item && d.item.amount && d.item.amount[currency]) || null;
  const id = `earnings-${currency.toLowerCase()}`;
  const placementName = (p) => (p === null || p === undefined ? '(no channel)' : p);
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Earnings in {currency}</h2>
      <p role="status">
        {currency}: earned {sum(total('pending'), total('approved'), total('paid'))} (pending {total('pending')},
        approved {total('approved')}, paid {total('paid')}); reversed {total('reversed')}.
      </p>
      <Table caption={`Top links by EPC (${currency})`} head={['Link', 'Partner', ...figureHead]}
        empty="No link has clicks and commissions in this currency."
        rows={top(links, currency, 'epc').map((i) => [linkCell(i.link), i.partner, ...figures(i, currency)])} />
      <Table caption={`Top links by amount (${currency})`} head={['Link', 'Partner', ...figureHead]}
        rows={top(links, currency, 'amount').map((i) => [linkCell(i.link), i.partner, ...figures(i, currency)])} />
      <Table caption={`Top placements by EPC (${currency})`} head={['Link', 'Placement', ...figureHead]}
        empty="No placement has clicks and commissions in this currency."
        rows={top(placements, currency, 'epc').map((i) => [linkCell(i.link), placementName(i.placement), ...figures(i, currency)])} />
      <Table caption={`Top placements by amount (${currency})`} head={['Link', 'Placement', ...figureHead]}
        rows={top(placements, currency, 'amount').map((i) => [linkCell(i.link), placementName(i.placement), ...figures(i, currency)])} />
      <Chart id={`${id}-per-day`} title={`Earnings per day in ${currency}`} unit={currency} days={chartDays} series={[
        { label: 'earned', value: (d) => earned(dayAmount(d)), plot: (d) => Number(earned(dayAmount(d))) },
        { label: 'reversed', value: (d) => (dayAmount(d) ? dayAmount(d).reversed : '0'), plot: (d) => Number(dayAmount(d) ? dayAmount(d).reversed : 0) },
        { label: 'EPC', value: (d) => epcText(d.item && (d.item.epc || {})[currency]), plot: (d) => (d.item && (d.item.epc || {})[currency] ? Number(d.item.epc[currency]) : null) }]} />
    </section>
  );
}

function Unattributed({ unattributed }) {
  const amount = (unattributed && unattributed.amount) || {};
  const conversions = (unattributed && unattributed.conversions) || { pending: 0, approved: 0, reversed: 0, paid: 0 };
  return (
    <section class="card" aria-labelledby="unattributed-title">
      <h2 id="unattributed-title">Unattributed commissions</h2>
      <p>
        Commissions whose sub-ID or tracking id names no link (an unknown token, a per-channel code, a deleted link).
        They count here and in no link or placement above.
      </p>
      <p>Conversions: {conversionsText(conversions)}.</p>
      <Table caption="Unattributed amounts per currency" head={['Currency', 'Pending', 'Approved', 'Reversed', 'Paid']}
        empty="None in this range."
        rows={Object.keys(amount).sort().map((c) => [c, ...STATUSES.map((s) => amount[c][s])])} />
    </section>
  );
}

function CsvDownload({ range }) {
  const [group, setGroup] = useState('link');
  const [error, setError] = useState(null);
  async function download() {
    setError(null);
    try {
      const { data } = await api('GET', `/stats/earnings${query({ ...range, group })}`, { headers: { Accept: 'text/csv' } });
      downloadText(`earnings-${group}-${range.from}-${range.to}.csv`, data);
    } catch (err) {
      setError(err);
    }
  }
  return (
    <form class="filters" onSubmit={(e) => (e.preventDefault(), download())}>
      <Field id="earnings-csv-group" as="select" label="CSV rows per" value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
        <option value="link">link</option>
        <option value="placement">placement</option>
        <option value="partner">partner</option>
        <option value="day">day</option>
      </Field>
      <button type="submit">Download earnings CSV</button>
      <Notice error={error} />
    </form>
  );
}

export function Earnings() {
  const today = new Date();
  const [range, setRange] = useState({ from: day(new Date(today.getTime() - 29 * 86400e3)), to: day(today) });
  const [data, error] = useLoad(async () => {
    const [links, placements, days] = await Promise.all(['link', 'placement', 'day'].map(
      (group) => api('GET', `/stats/earnings${query({ ...range, group })}`)));
    return { links: links.data.items, placements: placements.data.items, days: days.data.items, unattributed: links.data.unattributed };
  }, [range.from, range.to]);
  const set = (k) => (e) => e.currentTarget.value && setRange({ ...range, [k]: e.currentTarget.value });
  const currencies = data ? currenciesOf([...data.links, ...data.days]) : [];
  return (
    <>
      <PageTitle>Earnings</PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Field id="earnings-from" type="date" label="From (UTC day)" value={range.from} onChange={set('from')} />
        <Field id="earnings-to" type="date" label="To (UTC day)" value={range.to} onChange={set('to')} />
      </form>
      <p class="hint">
        EPC is (pending + approved + paid) / human clicks, per currency; amounts in different currencies are never added.
        A commission counts on the UTC day it occurred, so the EPC of recent days rises as the network reports them.
      </p>
      <Notice error={error} />
      {data && (
        <>
          {currencies.length === 0 && <p class="empty">No attributed commissions in this range.</p>}
          {currencies.map((c) => (
            <CurrencySection key={c} currency={c} links={data.links} placements={data.placements} days={data.days} range={range} />
          ))}
          <Unattributed unattributed={data.unattributed} />
        </>
      )}
      <CsvDownload range={range} />
    </>
  );
}

// One link's or partner's earnings over the API's default range (the last 30 UTC days), compact.
export function EarningsSummary({ group, name }) {
  const [data, error] = useLoad(async () => (await api('GET', `/stats/earnings${query({ group, [group]: name })}`)).data, [group, name]);
  const item = data && data.items.find((i) => i[group] === name);
  const amount = (item && item.amount) || {};
  const conversions = (item && item.conversions) || { pending: 0, approved: 0, reversed: 0, paid: 0 };
  return (
    <section class="card" aria-labelledby="earnings-summary-title">
      <h2 id="earnings-summary-title">Earnings</h2>
      <Notice error={error} />
      {data && (
        <>
          <p>
            From {data.from} to {data.to} (UTC days): {item ? item.human_clicks : 0} human clicks; conversions {conversionsText(conversions)}.
          </p>
          <Table caption={`Earnings per currency: ${name}`} head={['Currency', 'Pending', 'Approved', 'Reversed', 'Paid', 'EPC']}
            empty="No commissions in this range."
            rows={Object.keys(amount).sort().map((c) => [c, ...STATUSES.map((s) => amount[c][s]), epcText((item.epc || {})[c])])} />
          <p><a href="#/earnings">All earnings</a></p>
        </>
      )}
    </section>
  );
}

// The partner's postback URL and a new secret (admin): the secret is shown once, and the old one
// stops working at once.
export function Postback({ partner, base }) {
  const [secret, setSecret] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const url = base
    ? `${base}/postback/${enc(partner.slug)}?order_id=...&subid=...&status=...&amount=...&currency=...&occurred_at=...&secret=...`
    : null;
  async function rotate() {
    setError(null);
    setBusy(true);
    try {
      const { data } = await api('POST', `/partners/${enc(partner.slug)}/postback-secret`);
      setSecret(data.secret);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section class="card" aria-labelledby="postback-title">
      <h2 id="postback-title">Postback</h2>
      {url ? (
        <>
          <CopyField id="postback-url" label="Postback URL" value={url} />
          <p class="hint">
            Put it in the network's postback settings with its macros in place of each <code>...</code>;
            use <code>tracking_id</code> instead of <code>subid</code> where the network reports a per-channel code.
            The secret may go in the <code>X-Refgate-Secret</code> header instead.
          </p>
        </>
      ) : (
        <p class="notice">Set REFGATE_PUBLIC_BASE_URL to see this partner's postback URL.</p>
      )}
      <p>A new secret replaces the current one at once: postbacks with the old secret are refused from then on.</p>
      <button type="button" disabled={busy} onClick={rotate}>New postback secret</button>
      <Notice error={error} />
      {secret && (
        <>
          <Notice>
            New secret made; the old one no longer works. Copy it now: it is not shown again.
          </Notice>
          <CopyField id="postback-secret" label="Postback secret" value={secret} />
        </>
      )}
    </section>
  );
}
