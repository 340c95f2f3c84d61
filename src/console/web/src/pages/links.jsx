import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, enc, query, showFailure } from '../api.js';
import {
  Check, Conflict, CopyField, Field, Notice, PageTitle, Table, localToUtc, showTime, useLoad, utcToLocalInput,
} from '../ui.jsx';
import { LinkHealth } from './link_health.jsx';
import { EarningsSummary } from './earnings.jsx';
import { RulesEditor, rulesProblems } from './rules_editor.jsx';
import { LinkStats } from './stats.jsx';

// The link-health states of GET /links?health= (the checker's confirmed findings).
const HEALTH_STATES = ['ok', 'broken', 'code_dropped', 'homepage', 'moved', 'unavailable', 'redirect_loop', 'refused'];

// A field's new value, read while its event is current. Changes apply to the latest values, not
// to those of the last render: two events before a render (a select's change, then typing) both
// count.
const fieldValue = (e) => (e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value);

const usePartners = () => useLoad(async () => (await api('GET', '/partners?limit=200')).data.items, []);

export function LinkList({ can }) {
  const [filters, setFilters] = useState({ partner: '', status: '', health: '', expiring: false, q: '' });
  const [cursors, setCursors] = useState([null]);
  const [creating, setCreating] = useState(false);
  const [partners] = usePartners();
  const cursor = cursors[cursors.length - 1];
  const [page, error] = useLoad(async () => (await api('GET', `/links${query({
    partner: filters.partner, status: filters.status, health: filters.health, q: filters.q, limit: 25, cursor,
    expiring_within_days: filters.expiring ? 14 : '',
  })}`)).data, [filters, cursor]);
  const set = (k) => (e) => {
    const value = fieldValue(e);
    // The change event that follows typing (or a focus that typed nothing) keeps the page.
    if (value === filters[k]) return;
    setCursors([null]);
    setFilters((f) => ({ ...f, [k]: value }));
  };
  return (
    <>
      <PageTitle>Links</PageTitle>
      {can.edit && !creating && (
        <button type="button" onClick={() => setCreating(true)}>New link</button>
      )}
      {creating && <LinkForm partners={partners || []} onDone={() => setCreating(false)} />}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <Field id="links-partner" as="select" label="Filter by partner" value={filters.partner} onChange={set('partner')}>
          <option value="">All partners</option>
          {(partners || []).map((p) => <option value={p.slug}>{p.name}</option>)}
        </Field>
        <Field id="links-status" as="select" label="Filter by status" value={filters.status} onChange={set('status')}>
          <option value="">Any status</option>
          <option value="active">Active</option>
          <option value="disabled">Disabled</option>
        </Field>
        <Field id="links-health" as="select" label="Filter by health" value={filters.health} onChange={set('health')}>
          <option value="">Any health</option>
          {HEALTH_STATES.map((h) => <option value={h}>{h}</option>)}
        </Field>
        <Field id="links-q" type="search" label="Search links (slug or destination)" value={filters.q} onInput={set('q')} />
        <Check id="links-expiring" label="Expiring within 14 days" checked={filters.expiring} onChange={set('expiring')} />
      </form>
      <Notice error={error} />
      {page && (
        <>
          <Table caption="Links" head={['Link', 'Partner', 'Destination', 'Status', 'Expires']}
            empty="No link matches these filters."
            rows={page.items.map((l) => [
              <a href={`#/links/${enc(l.slug)}${l.domain ? `/${enc(l.domain)}` : ''}`}>{l.slug}</a>, l.partner, l.destination, l.status, showTime(l.expires_at),
            ])} />
          <div class="actions">
            <button type="button" class="secondary" disabled={cursors.length < 2}
              onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button>
            <button type="button" class="secondary" disabled={!page.next_cursor}
              onClick={() => setCursors([...cursors, page.next_cursor])}>Next page</button>
          </div>
        </>
      )}
    </>
  );
}

// The rules textarea as the API takes it: JSON when it parses, else the text itself, so that the
// server's answer names the problem.
function rulesBody(v) {
  const text = (v.rules || '').trim();
  if (!text && !v.had_rules) return {};
  if (!text) return { rules: [] };
  try {
    return { rules: JSON.parse(text) };
  } catch {
    return { rules: text };
  }
}

// The click cap as the API takes it (issue 44): empty is none, digits a number, anything else
// as typed so that the API names the field.
function capBody(text) {
  const s = String(text ?? '').trim();
  if (s === '') return null;
  return /^[0-9]+$/.test(s) ? Number(s) : s;
}

// The link as the API takes it, from the form's values.
function linkBody(v) {
  return {
    ...(v.slug ? { slug: v.slug } : {}),
    partner: v.partner,
    destination: v.destination,
    status: v.status,
    expires_at: v.expires_at ? localToUtc(v.expires_at) : null,
    fallback: v.fallback || null,
    utm_passthrough: v.utm_passthrough,
    auto_fallback: v.auto_fallback,
    max_human_clicks: capBody(v.max_human_clicks),
    ...(v.domain ? { domain: v.domain } : {}),
    ...rulesBody(v),
  };
}

// A new link's domain (issue 46), offered once domains are defined; empty: the default one.
function DomainSelect({ values, set, errors }) {
  const [domains] = useLoad(async () => (await api('GET', '/domains')).data.items, []);
  if (!domains || domains.length === 0) return null;
  return (
    <Field id="link-domain" as="select" label="Domain" value={values.domain || ''} error={errors.domain}
      onChange={set('domain')}>
      {domains.map((d) => <option value={d.default ? '' : d.host}>{d.host}{d.default ? ' (default)' : ''}</option>)}
    </Field>
  );
}

// The preview's reader: the country, platform and language chosen beside the preview.
function readerBody(v) {
  const reader = {};
  if (v.reader_country) reader.country = v.reader_country.toUpperCase();
  if (v.reader_platform) reader.platform = v.reader_platform;
  if (v.reader_language) reader.language = v.reader_language;
  return Object.keys(reader).length ? { reader } : {};
}

// The Location a reader would get, built by the server as the values change.
// Only the answer for the values now in the form is shown: an answer for earlier values that
// arrives late (typing paused past the 250 ms, then went on) is dropped, not shown over it.
function usePreview(values, slug) {
  const [preview, setPreview] = useState({ location: null, errors: {} });
  useEffect(() => {
    if (!values.partner || !values.destination) return setPreview({ location: null, errors: {} });
    let current = true;
    const timer = setTimeout(() => {
      api('POST', '/links/preview', { body: { ...linkBody(values), ...(slug ? { slug } : {}), ...readerBody(values) } }).then(
        ({ data }) => current && setPreview({
          location: data.location, publicUrl: data.public_url, rule: data.rule, placements: data.placements || [], errors: {},
        }),
        (err) => current && setPreview({ location: null, errors: err instanceof ApiError ? err.fieldErrors() : {} }),
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [JSON.stringify(values), slug]);
  return preview;
}

function LinkFields({ values, set, errors, partners, isNew }) {
  return (
    <>
      {isNew && (
        <Field id="link-slug" label="Slug" value={values.slug} required error={errors.slug}
          hint="Letters, digits and dashes: the public link is /go/<slug>." onInput={set('slug')} />
      )}
      {isNew && (
        <Field id="link-partner" as="select" label="Partner" value={values.partner} required
          error={errors.partner} onChange={set('partner')}>
          <option value="">Choose a partner</option>
          {partners.map((p) => <option value={p.slug}>{p.name} ({p.slug})</option>)}
        </Field>
      )}
      {isNew && <DomainSelect values={values} set={set} errors={errors} />}
      <Field id="link-destination" label="Destination" type="url" value={values.destination} required
        error={errors.destination} onInput={set('destination')} />
      <Field id="link-status" as="select" label="Status" value={values.status} error={errors.status} onChange={set('status')}>
        <option value="active">Active</option>
        <option value="disabled">Disabled</option>
      </Field>
      <Field id="link-expires" type="datetime-local" label="Expires at (your time zone; empty: never)"
        value={values.expires_at} error={errors.expires_at} onInput={set('expires_at')} />
      <Field id="link-fallback" type="url" label="Fallback after expiry or when disabled (optional)"
        value={values.fallback} error={errors.fallback} onInput={set('fallback')} />
      <Check id="link-utm" label="Pass the reader's utm_ parameters through" checked={values.utm_passthrough}
        onChange={set('utm_passthrough')} />
      <Check id="link-auto-fallback" label="Serve the fallback while link health finds the destination broken, unavailable or without the code (needs a fallback)"
        checked={values.auto_fallback} onChange={set('auto_fallback')} />
      {errors.auto_fallback && <p class="error" id="link-auto-fallback-error"><span aria-hidden="true">⚠ </span>Automatic fallback {errors.auto_fallback}</p>}
      <Field id="link-max-human-clicks" type="number" min="1" step="1" label="Human clicks cap"
        hint="Once the fleet counts this many human clicks the link answers as an expired one (its fallback or 410). Empty: no cap."
        value={values.max_human_clicks} error={errors.max_human_clicks} onInput={set('max_human_clicks')} />
      <RulesEditor text={values.rules} errors={errors} onChange={(text) => set('rules')({ currentTarget: { value: text } })} />
    </>
  );
}

// A channel's token as the preview knows it: none without a sub-ID parameter (the Location is
// known then), per channel for a prefix pattern, and an opaque one only once the link has an id.
function previewToken(p) {
  if (p.token) return <code>{p.token}</code>;
  if (p.location) return 'none (no sub-ID parameter)';
  return p.channel.endsWith('*') ? 'each channel its own' : 'given when the link is saved';
}

function PreviewBox({ preview, values, set }) {
  return (
    <>
      {values && values.rules && values.rules.trim() && (
        <fieldset class="reader">
          <legend>Preview as a reader from</legend>
          <Field id="reader-country" label="Country (e.g. DE)" value={values.reader_country} onInput={set('reader_country')} />
          <Field id="reader-platform" as="select" label="Platform" value={values.reader_platform} onChange={set('reader_platform')}>
            <option value="">any</option>
            <option value="ios">iOS</option>
            <option value="android">Android</option>
            <option value="desktop">Desktop</option>
          </Field>
          <Field id="reader-language" label="Language (e.g. fr-CH)" value={values.reader_language} onInput={set('reader_language')} />
        </fieldset>
      )}
      <div class="preview" aria-live="polite">
        <strong>A reader is sent to: </strong>
        {preview.location ? <code class="break">{preview.location}</code> : <span>(fill in a partner and a valid destination)</span>}
        {preview.rule ? <span> (rule {preview.rule})</span> : null}
      </div>
      {preview.placements && preview.placements.length > 0 && (
        <Table caption="Code and sub-ID token per channel" head={['Channel', 'Referral code', 'Sub-ID token']}
          rows={preview.placements.map((p) => [
            <code>{p.channel}</code>, <code>{p.ref_code}</code>,
            previewToken(p),
          ])} />
      )}
    </>
  );
}

function useValues(initial) {
  const [values, setValues] = useState(initial);
  const set = (k) => (e) => {
    const value = fieldValue(e);
    setValues((v) => (v[k] === value ? v : { ...v, [k]: value }));
  };
  return [values, set, setValues];
}

function LinkForm({ partners, onDone }) {
  const [values, set] = useValues({ slug: '', partner: '', destination: '', status: 'active', expires_at: '', fallback: '', utm_passthrough: false, auto_fallback: false, max_human_clicks: '', rules: '' });
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const preview = usePreview(values);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    const refused = rulesProblems(values.rules);
    if (Object.keys(refused).length) return setErrors(refused);
    try {
      await api('POST', '/links', { body: linkBody(values) });
      onDone();
      location.hash = `#/links/${enc(values.slug)}`;
    } catch (err) {
      showFailure(err, setErrors, setError);
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-link-title">
      <h2 id="new-link-title">New link</h2>
      <LinkFields values={values} set={set} errors={errors} partners={partners} isNew />
      <PreviewBox preview={preview} values={values} set={set} />
      <Notice error={error} />
      <div class="actions">
        <button type="submit">Create</button>
        <button type="button" class="secondary" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

export function LinkPage({ id, domain, can }) {
  const [link, error, reload] = useLoad(async () => {
    // The link on its own domain (?domain=; none: the default domain's).
    const on = query({ domain });
    const r = await api('GET', `/links/${enc(id)}${on}`);
    const share = await api('GET', `/links/${enc(id)}/share${on}`).then((s) => s.data, (e) => ({ error: e }));
    return { ...r.data, etag: r.etag, share };
  }, [id, domain]);
  if (error) return (<><PageTitle>Link {id}</PageTitle><Notice error={error} /></>);
  if (!link) return <p class="loading">Loading…</p>;
  return (
    <>
      <PageTitle>Link {link.slug}</PageTitle>
      <p>Partner <a href={`#/partners/${enc(link.partner)}`}>{link.partner}</a>; status {link.status}{link.domain ? `; on ${link.domain}` : ''}.</p>
      <Serving link={link} />
      {can.edit ? <LinkEditor link={link} reload={reload} /> : <p class="notice">You have the viewer role: you can read this link but not change it.</p>}
      <LinkHealth slug={link.slug} can={can} />
      <LinkStats slug={link.slug} domain={link.domain} />
      <EarningsSummary group="link" name={link.slug} />
      <Share link={link} />
    </>
  );
}

// Automatic fallback: what readers get now, and the branches link health switched away.
function Serving({ link }) {
  if (!link.auto_fallback) return null;
  const why = (b) => `${b.state}${b.detail ? ` (${b.detail})` : ''} since ${b.since}`;
  const branches = (link.fallback_branches || []).filter((b) => b.branch !== 'default');
  return (
    <div class="card" role="status">
      <p>Automatic fallback: {link.serving === 'fallback'
        ? <strong>serving fallback ({why(link.serving_reason)})</strong>
        : 'serving the destination'}.</p>
      {branches.length > 0 && (
        <ul>
          {branches.map((b) => <li key={b.branch}>{b.branch}: switched away, {why(b)}</li>)}
        </ul>
      )}
    </div>
  );
}

function LinkEditor({ link, reload }) {
  const initial = {
    partner: link.partner, destination: link.destination, status: link.status,
    expires_at: utcToLocalInput(link.expires_at), fallback: link.fallback || '', utm_passthrough: !!link.utm_passthrough, auto_fallback: !!link.auto_fallback,
    max_human_clicks: link.max_human_clicks == null ? '' : String(link.max_human_clicks),
    rules: link.rules && link.rules.length ? JSON.stringify(link.rules, null, 2) : '', had_rules: !!(link.rules && link.rules.length),
  };
  const [values, set] = useValues(initial);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [message, setMessage] = useState(null);
  const [conflict, setConflict] = useState(null);
  // Named: the preview's tokens are the link's own.
  const preview = usePreview(values, link.slug);
  async function save(patch, etag) {
    setErrors({});
    setError(null);
    setMessage(null);
    try {
      await api('PATCH', `/links/${enc(link.slug)}${query({ domain: link.domain })}`, { body: patch, ifMatch: etag });
      setConflict(null);
      setMessage('Saved.');
      reload();
    } catch (err) {
      if (err.status === 412) {
        const fresh = await api('GET', `/links/${enc(link.slug)}${query({ domain: link.domain })}`);
        setConflict({ patch, theirs: fresh.data, etag: fresh.etag });
      } else showFailure(err, setErrors, setError);
    }
  }
  const { partner, ...patch } = linkBody(values);
  return (
    <>
      {conflict && <Conflict yours={conflict.patch} theirs={conflict.theirs}
        onReload={() => (setConflict(null), reload())} onOverwrite={() => save(conflict.patch, conflict.etag)} />}
      <form class="card" onSubmit={(e) => {
        e.preventDefault();
        const refused = rulesProblems(values.rules);
        if (Object.keys(refused).length) return setErrors(refused);
        return save(patch, link.etag);
      }} aria-labelledby="edit-link-title">
        <h2 id="edit-link-title">Edit</h2>
        <LinkFields values={values} set={set} errors={errors} partners={[]} />
        <PreviewBox preview={preview} values={values} set={set} />
        <Notice error={error} />
        {message && <Notice>{message}</Notice>}
        <div class="actions">
          <button type="submit">Save link</button>
          <button type="button" class="secondary"
            onClick={() => save({ status: link.status === 'active' ? 'disabled' : 'active' }, link.etag)}>
            {link.status === 'active' ? 'Disable link' : 'Enable link'}
          </button>
        </div>
      </form>
    </>
  );
}

// The public link, snippet and QR code, optionally for a channel: `?src=` in all three, the
// channel checked by the share API as the redirect counts it (a refused one keeps the last good).
function Share({ link }) {
  const base = `/api/v1/links/${enc(link.slug)}`;
  const [channel, setChannel] = useState('');
  const [made, setMade] = useState({ share: link.share, src: '' });
  const [channelError, setChannelError] = useState(null);
  useEffect(() => {
    let current = true;
    const src = channel.trim();
    if (!src) {
      setMade({ share: link.share, src: '' });
      setChannelError(null);
      return undefined;
    }
    const timer = setTimeout(() => api('GET', `/links/${enc(link.slug)}/share${query({ src, domain: link.domain })}`).then(
      ({ data }) => current && (setMade({ share: data, src }), setChannelError(null)),
      (err) => current && setChannelError(err instanceof ApiError ? (err.fieldErrors().src || err.message) : String(err)),
    ), 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [channel, link.share]);
  if (link.share.error) return <Notice error={link.share.error} />;
  if (!link.share.public_url) {
    return <p class="notice">Set REFGATE_PUBLIC_BASE_URL to share this link and get its QR code.</p>;
  }
  const { share, src } = made;
  const qr = (type, size, download) => `${base}/qr.${type}${query({ size, src, download: download ? 1 : '', domain: link.domain })}`;
  return (
    <section class="card" aria-labelledby="share-title">
      <h2 id="share-title">Share</h2>
      <Field id="share-channel" label="Channel (src)" value={channel} error={channelError}
        hint="Optional: the newsletter, page or post this link goes into, e.g. newsletter-2026-48. Lower-case letters, digits, . _ -"
        onInput={(e) => setChannel(e.currentTarget.value)} />
      <CopyField id="share-url" label="Public link" value={share.public_url} />
      <CopyField id="share-snippet" label="HTML snippet" value={share.html_snippet} />
      <img class="qr" src={qr('svg', 192)} width="192" height="192" alt={`QR code for ${share.public_url}`} />
      <ul class="inline">
        <li><a href={qr('svg', 512, true)} download>Download QR code (SVG)</a></li>
        <li><a href={qr('png', 512, true)} download>Download QR code (PNG)</a></li>
      </ul>
    </section>
  );
}
