import { useState } from 'preact/hooks';
import { api, ApiError, enc, query, showFailure } from '../api.js';
import {
  Conflict, Field, Notice, PageTitle, Table, localToUtc, showTime, timeZone, useLoad,
} from '../ui.jsx';
import { EarningsSummary, Postback } from './earnings.jsx';

export function PartnerList() {
  const [q, setQ] = useState('');
  const [items, error] = useLoad(async () => (await api('GET', `/partners${query({ q, limit: 200 })}`)).data.items, [q]);
  return (
    <>
      <PageTitle>Partners</PageTitle>
      <form role="search" onSubmit={(e) => e.preventDefault()}>
        <Field id="partner-search" label="Search partners (slug or name)" type="search" value={q}
          onInput={(e) => setQ(e.currentTarget.value)} />
      </form>
      <Notice error={error} />
      {items && (
        <Table caption="Partners" head={['Partner', 'Name', 'Current code', 'Scheduled switches']}
          empty="No partner matches." rows={items.map((p) => [
            <a href={`#/partners/${enc(p.slug)}`}>{p.slug}</a>, p.name, <code>{p.ref_code}</code>,
            p.scheduled_codes.length || 'none',
          ])} />
      )}
    </>
  );
}

const lines = (text) => text.split('\n').map((s) => s.trim()).filter(Boolean);
function paramsFromText(text) {
  const out = {};
  for (const line of lines(text)) {
    const eq = line.indexOf('=');
    out[eq < 0 ? line : line.slice(0, eq).trim()] = eq < 0 ? '' : line.slice(eq + 1).trim();
  }
  return out;
}
const paramsToText = (params) => Object.entries(params || {}).map(([k, v]) => `${k}=${v}`).join('\n');

// Saves a merge patch with the partner's ETag; a 412 becomes a conflict to resolve.
function usePatch(slug, partner, reload) {
  const [conflict, setConflict] = useState(null);
  async function save(patch) {
    try {
      await api('PATCH', `/partners/${enc(slug)}`, { body: patch, ifMatch: partner.etag });
      setConflict(null);
      reload();
    } catch (err) {
      if (err.status !== 412) throw err;
      const fresh = await api('GET', `/partners/${enc(slug)}`);
      setConflict({ patch, theirs: fresh.data, etag: fresh.etag });
      return 'conflict';
    }
    return 'saved';
  }
  async function overwrite() {
    const { patch, etag } = conflict;
    await api('PATCH', `/partners/${enc(slug)}`, { body: patch, ifMatch: etag });
    setConflict(null);
    reload();
  }
  return { conflict, save, overwrite, dismiss: () => (setConflict(null), reload()) };
}

export function PartnerPage({ id, can, session }) {
  const [partner, error, reload] = useLoad(async () => {
    const [p, codes, links] = await Promise.all([
      api('GET', `/partners/${enc(id)}`),
      api('GET', `/partners/${enc(id)}/codes`),
      api('GET', `/links${query({ partner: id, limit: 200 })}`),
    ]);
    return { ...p.data, etag: p.etag, codes: codes.data.items, links: links.data.items };
  }, [id]);
  const patcher = usePatch(id, partner, reload);
  if (error) return (<><PageTitle>Partner {id}</PageTitle><Notice error={error} /></>);
  if (!partner) return <p class="loading">Loading…</p>;
  return (
    <>
      <PageTitle>Partner {partner.name}</PageTitle>
      <p>
        Slug <code>{partner.slug}</code>; current code <strong><code>{partner.ref_code}</code></strong>{' '}
        as <code>{partner.ref_param}</code>.
      </p>
      {patcher.conflict && (
        <Conflict yours={patcher.conflict.patch} theirs={patcher.conflict.theirs}
          onReload={patcher.dismiss} onOverwrite={() => patcher.overwrite().catch((e) => alert(e.message))} />
      )}
      {can.edit ? <CodeForm partner={partner} patcher={patcher} />
        : <p class="notice">You have the viewer role: you can read this partner but not change it.</p>}
      <Scheduled partner={partner} patcher={patcher} can={can} />
      <Table caption="Code history" head={['Code', 'Channel codes', 'Live from', 'Live until', 'Kind']}
        rows={[...partner.codes].reverse().map((c) => [
          <code>{c.ref_code}</code>,
          (c.channel_codes || []).length ? <code>{c.channel_codes.map((x) => `${x.channel}=${x.ref_code}`).join(', ')}</code> : 'none',
          showTime(c.live_from), showTime(c.live_until), c.scheduled ? 'scheduled' : 'was live',
        ])} />
      {can.edit && <RulesForm partner={partner} patcher={patcher} />}
      {can.edit ? <PlacementsForm partner={partner} patcher={patcher} /> : <PlacementsSummary partner={partner} />}
      <EarningsSummary group="partner" name={partner.slug} />
      {can.admin && <Postback partner={partner} base={session.public_base_url} />}
      <h2>Links of this partner</h2>
      <Table caption="Links" head={['Link', 'Destination', 'Status']} empty="This partner has no links."
        rows={partner.links.map((l) => [<a href={`#/links/${enc(l.slug)}`}>{l.slug}</a>, l.destination, l.status])} />
    </>
  );
}

function CodeForm({ partner, patcher }) {
  const [code, setCode] = useState('');
  const [when, setWhen] = useState('now');
  const [at, setAt] = useState('');
  const [errors, setErrors] = useState({});
  const [message, setMessage] = useState(null);
  const [error, setError] = useState(null);

  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    setMessage(null);
    const patch = { ref_code: code };
    if (when === 'later') {
      const utc = localToUtc(at);
      if (!utc) return setErrors({ valid_from: 'Choose a date and time for the switch.' });
      patch.valid_from = utc;
    }
    try {
      const result = await patcher.save(patch);
      if (result === 'saved') {
        setMessage(when === 'later' ? `Switch to ${code} scheduled for ${showTime(patch.valid_from)}.` : `The code is now ${code}.`);
        setCode('');
      }
    } catch (err) {
      showFailure(err, setErrors, setError);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="code-form-title">
      <h2 id="code-form-title">Change the referral code</h2>
      <Field id="partner-ref-code" label="Referral code" value={code} required error={errors.ref_code}
        onInput={(e) => setCode(e.currentTarget.value)} />
      <fieldset>
        <legend>When</legend>
        <div class="field check">
          <input type="radio" id="when-now" name="when" checked={when === 'now'} onChange={() => setWhen('now')} />
          <label for="when-now">Now</label>
        </div>
        <div class="field check">
          <input type="radio" id="when-later" name="when" checked={when === 'later'} onChange={() => setWhen('later')} />
          <label for="when-later">At a date and time</label>
        </div>
      </fieldset>
      {when === 'later' && (
        <Field id="partner-valid-from" label={`Switch at (your time zone, ${timeZone()})`} type="datetime-local"
          value={at} error={errors.valid_from} hint="Stored in UTC; every instance switches on its own clock."
          onInput={(e) => setAt(e.currentTarget.value)} />
      )}
      <Notice error={error} />
      {message && <Notice>{message}</Notice>}
      <button type="submit">Save</button>
    </form>
  );
}

function Scheduled({ partner, patcher, can }) {
  const [error, setError] = useState(null);
  async function cancel(s) {
    try {
      await patcher.save({ ref_code: null, valid_from: s.valid_from });
    } catch (err) {
      setError(err);
    }
  }
  return (
    <section aria-labelledby="scheduled-title">
      <h2 id="scheduled-title">Scheduled switches</h2>
      <Notice error={error} />
      <Table caption="Scheduled switches" head={['Code', 'Channel codes', `At (${timeZone()})`, 'At (UTC)', '']}
        empty="No switch is scheduled."
        rows={partner.scheduled_codes.map((s) => [
          s.ref_code ? <code>{s.ref_code}</code> : 'unchanged',
          s.channel_codes ? <code>{s.channel_codes.map((x) => `${x.channel}=${x.ref_code}`).join(', ') || '(none)'}</code> : 'unchanged',
          showTime(s.valid_from), <time datetime={s.valid_from}>{s.valid_from}</time>,
          can.edit ? (
            <button type="button" class="secondary" onClick={() => cancel(s)}>
              {s.ref_code ? `Cancel switch to ${s.ref_code}` : `Cancel switch at ${s.valid_from}`}
            </button>
          ) : '',
        ])} />
    </section>
  );
}

function RulesForm({ partner, patcher }) {
  const [domains, setDomains] = useState((partner.allowed_domains || []).join('\n'));
  const [params, setParams] = useState(paramsToText(partner.extra_params));
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [message, setMessage] = useState(null);

  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    setMessage(null);
    try {
      const result = await patcher.save({ allowed_domains: lines(domains), extra_params: paramsFromText(params) });
      if (result === 'saved') setMessage('Domains and parameters saved.');
    } catch (err) {
      showFailure(err, setErrors, setError);
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="rules-title">
      <h2 id="rules-title">Allowed domains and fixed parameters</h2>
      <Field id="partner-domains" as="textarea" rows="3" label="Allowed domains (one per line)" value={domains}
        error={errors.allowed_domains} onInput={(e) => setDomains(e.currentTarget.value)} />
      <Field id="partner-params" as="textarea" rows="3" label="Fixed parameters (name=value, one per line)"
        value={params} error={errors.extra_params} onInput={(e) => setParams(e.currentTarget.value)} />
      <Notice error={error} />
      {message && <Notice>{message}</Notice>}
      <button type="submit">Update domains and parameters</button>
    </form>
  );
}

// What a viewer sees of the partner's placements (issue 42).
function PlacementsSummary({ partner }) {
  return (
    <section aria-labelledby="placements-title">
      <h2 id="placements-title">Placements</h2>
      <p>
        Sub-ID parameter {partner.subid_param ? <code>{partner.subid_param}</code> : 'none'}; tokens {partner.subid_style}
        {partner.subid_style === 'readable' && <> (characters <code>{partner.subid_charset}</code>)</>}.
      </p>
      <Table caption="Channel codes" head={['Channel', 'Referral code']} empty="No channel has a code of its own."
        rows={(partner.channel_codes || []).map((c) => [<code>{c.channel}</code>, <code>{c.ref_code}</code>])} />
    </section>
  );
}

// The sub-ID parameter, the token style and the ordered channel codes (the first match wins),
// saved in one PATCH.
function PlacementsForm({ partner, patcher }) {
  const [subid, setSubid] = useState(partner.subid_param || '');
  const [style, setStyle] = useState(partner.subid_style || 'opaque');
  const [charset, setCharset] = useState(partner.subid_charset || 'a-z0-9');
  const [codes, setCodes] = useState((partner.channel_codes || []).map((c) => ({ ...c })));
  const [errors, setErrors] = useState({});
  const [codeErrors, setCodeErrors] = useState([]);
  const [error, setError] = useState(null);
  const [message, setMessage] = useState(null);
  const change = (i, field, value) => setCodes(codes.map((c, j) => (j === i ? { ...c, [field]: value } : c)));
  const move = (i, by) => {
    const next = [...codes];
    [next[i], next[i + by]] = [next[i + by], next[i]];
    setCodes(next);
  };

  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setCodeErrors([]);
    setError(null);
    setMessage(null);
    try {
      const result = await patcher.save({
        subid_param: subid.trim() || null, subid_style: style, subid_charset: charset.trim(),
        channel_codes: codes.map((c) => ({ channel: c.channel.trim(), ref_code: c.ref_code.trim() })),
      });
      if (result === 'saved') setMessage('Placements saved.');
    } catch (err) {
      showFailure(err, setErrors, setError);
      // Each entry's own errors beside its fields: "channel_codes[2].channel".
      if (err instanceof ApiError && err.status === 422) {
        const byEntry = [];
        for (const e of err.problem.errors || []) {
          const m = /^channel_codes\[(\d+)\]\.(channel|ref_code)$/.exec(String(e.field || ''));
          if (m) byEntry[Number(m[1])] = { ...byEntry[Number(m[1])], [m[2]]: e.message };
        }
        setCodeErrors(byEntry);
      }
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="placements-title">
      <h2 id="placements-title">Placements</h2>
      <Field id="partner-subid-param" label="Sub-ID parameter" value={subid} error={errors.subid_param}
        hint="The network's sub-ID parameter (subId1, sid, clickref, afftrack, u1, ascsubtag); empty: none."
        onInput={(e) => setSubid(e.currentTarget.value)} />
      <Field id="partner-subid-style" as="select" label="Token style" value={style} error={errors.subid_style}
        onChange={(e) => setStyle(e.currentTarget.value)}>
        <option value="opaque">opaque (link id and channel digest)</option>
        <option value="readable">readable (slug and channel)</option>
      </Field>
      <Field id="partner-subid-charset" label="Characters of readable tokens" value={charset} error={errors.subid_charset}
        hint="Ranges and literals, e.g. a-z0-9_ (readable tokens only)." onInput={(e) => setCharset(e.currentTarget.value)} />
      <fieldset>
        <legend>Channel codes (the first match wins)</legend>
        {codes.length === 0 && <p>No channel has a code of its own: every click carries {partner.ref_code}.</p>}
        <ol class="channel-codes">
          {codes.map((c, i) => (
            <li key={i}>
              <Field id={`channel-code-${i}-channel`} label={`Channel ${i + 1}`} value={c.channel}
                error={codeErrors[i] && codeErrors[i].channel}
                hint="A channel, or a prefix followed by * (nl-*)." onInput={(e) => change(i, 'channel', e.currentTarget.value)} />
              <Field id={`channel-code-${i}-code`} label={`Code for channel ${i + 1}`} value={c.ref_code}
                error={codeErrors[i] && codeErrors[i].ref_code}
                onInput={(e) => change(i, 'ref_code', e.currentTarget.value)} />
              <div class="actions">
                <button type="button" class="secondary" disabled={i === 0} onClick={() => move(i, -1)}>Move channel {i + 1} up</button>
                <button type="button" class="secondary" disabled={i === codes.length - 1} onClick={() => move(i, 1)}>Move channel {i + 1} down</button>
                <button type="button" class="secondary" onClick={() => setCodes(codes.filter((_, j) => j !== i))}>Remove channel {i + 1}</button>
              </div>
            </li>
          ))}
        </ol>
        {errors.channel_codes && !codeErrors.length && <p class="error" role="alert"><span aria-hidden="true">⚠ </span>{errors.channel_codes}</p>}
        <button type="button" class="secondary" onClick={() => setCodes([...codes, { channel: '', ref_code: '' }])}>Add a channel code</button>
      </fieldset>
      <Notice error={error} />
      {message && <Notice>{message}</Notice>}
      <button type="submit">Save placements</button>
    </form>
  );
}
