import { useState } from 'preact/hooks';
import { api, showFailure } from '../api.js';
import { CopyField, Field, Notice, PageTitle, Table, showTime, useLoad } from '../ui.jsx';

// Webhooks (admin): the receivers of refgate's events, each one's secret shown once (on creation
// and rotation), its delivery log and "send again". docs/webhooks.md says what is sent.
export function Webhooks({ can }) {
  const [hooks, error, reload] = useLoad(async () => (can.admin ? (await api('GET', '/webhooks')).data.items : []), []);
  const [secret, setSecret] = useState(null);
  const [message, setMessage] = useState(null);
  const [actionError, setActionError] = useState(null);
  const [open, setOpen] = useState(null);
  if (!can.admin) return (<><PageTitle>Webhooks</PageTitle><p>Only admins manage webhooks.</p></>);

  async function act(fn) {
    setActionError(null);
    setMessage(null);
    try {
      await fn();
    } catch (err) {
      setActionError(err);
    }
    reload();
  }
  const toggle = (h) => act(async () => {
    await api('PATCH', `/webhooks/${h.id}`, { body: { active: !h.active }, ifMatch: `"${h.version}"` });
    setMessage(h.active ? `Webhook ${h.id} turned off.` : `Webhook ${h.id} turned on.`);
  });
  const rotate = (h) => act(async () => {
    if (!confirm(`Make a new secret for webhook ${h.id}? The old one stops signing at once.`)) return;
    const { data } = await api('POST', `/webhooks/${h.id}/secret`);
    setSecret({ id: h.id, secret: data.secret });
  });
  const remove = (h) => act(async () => {
    if (!confirm(`Delete webhook ${h.id} and its delivery log?`)) return;
    await api('DELETE', `/webhooks/${h.id}`, { ifMatch: `"${h.version}"` });
    setMessage(`Webhook ${h.id} deleted.`);
    if (open === h.id) setOpen(null);
  });
  const state = (h) => (h.active ? (h.failing_since ? `active, failing since ${showTime(h.failing_since)}` : 'active')
    : h.disabled_at ? `disabled ${showTime(h.disabled_at)}: ${h.disabled_reason}` : 'off');
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <p>Signed HTTPS requests to the tools around refgate whenever partners, links, codes, link health,
        disclosures or commissions change, and clicks per hour.</p>
      <Notice error={error || actionError} />
      {message && <Notice>{message}</Notice>}
      {secret && (
        <div class="card">
          <h2>Secret of webhook {secret.id}</h2>
          <p>Copy it now: it is shown only once. The receiver verifies each request's signature with it.</p>
          <CopyField id="webhook-secret" label="Signing secret" value={secret.secret} />
        </div>
      )}
      {hooks && (
        <Table caption="Webhooks" head={['Id', 'URL', 'Events', 'State', 'Actions']}
          rows={hooks.map((h) => [String(h.id), h.url, h.events.join(', '), state(h),
            <div class="actions">
              <button type="button" class="secondary" onClick={() => setOpen(open === h.id ? null : h.id)}>
                {open === h.id ? 'Hide' : 'Show'} deliveries of webhook {h.id}
              </button>
              <button type="button" class="secondary" onClick={() => toggle(h)}>
                Turn webhook {h.id} {h.active ? 'off' : 'on'}
              </button>
              <button type="button" class="secondary" onClick={() => rotate(h)}>New secret for webhook {h.id}</button>
              <button type="button" class="secondary" onClick={() => remove(h)}>Delete webhook {h.id}</button>
            </div>])} empty="No webhooks yet." />
      )}
      {open !== null && <Deliveries id={open} />}
      <NewWebhook onCreated={(h) => (setSecret({ id: h.id, secret: h.secret }), setMessage(`Webhook ${h.id} created.`), reload())} />
    </>
  );
}

function Deliveries({ id }) {
  const [items, error, reload] = useLoad(async () => (await api('GET', `/webhooks/${id}/deliveries?limit=100`)).data.items, [id]);
  const [message, setMessage] = useState(null);
  const [actionError, setActionError] = useState(null);
  async function again(d) {
    setActionError(null);
    try {
      await api('POST', `/webhooks/${id}/deliveries/${d.id}/retry`);
      setMessage(`Delivery ${d.id} (${d.type}) will be sent again.`);
    } catch (err) {
      setActionError(err);
    }
    reload();
  }
  return (
    <section class="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries of webhook {id}</h2>
      <Notice error={error || actionError} />
      {message && <Notice>{message}</Notice>}
      <button type="button" class="secondary" onClick={reload}>Refresh deliveries</button>
      {items && (
        <Table caption={`Deliveries of webhook ${id}`}
          head={['Delivery', 'Event', 'Status', 'Attempts', 'Answer', 'Duration', 'Last attempt', '']}
          rows={items.map((d) => [String(d.id), `${d.type} (${d.event_id})`,
            d.status === 'pending' && d.next_attempt_at ? `pending, next ${showTime(d.next_attempt_at)}` : d.status,
            String(d.attempt), d.response_status !== null ? String(d.response_status) : (d.error || '—'),
            d.duration_ms !== null ? `${d.duration_ms} ms` : '—', d.last_attempt_at ? showTime(d.last_attempt_at) : '—',
            <button type="button" class="secondary" onClick={() => again(d)}>Send delivery {d.id} again</button>])}
          empty="Nothing sent yet." />
      )}
    </section>
  );
}

const eventTypes = ['partner.created', 'partner.updated', 'partner.deleted', 'partner.code_changed', 'link.created',
  'link.updated', 'link.deleted', 'link.health_changed', 'link.fallback_changed', 'disclosure.changed',
  'clicks.hourly', 'commission.recorded', 'commission.status_changed'];

function NewWebhook({ onCreated }) {
  const [url, setUrl] = useState('');
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState([]);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    try {
      const { data } = await api('POST', '/webhooks', { body: { url, events: all ? ['*'] : events } });
      onCreated(data);
      setUrl('');
      setEvents([]);
      setAll(true);
    } catch (err) {
      showFailure(err, setErrors, setError);
    }
  }
  const pick = (t) => (e) => setEvents(e.currentTarget.checked ? [...events, t] : events.filter((x) => x !== t));
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-webhook-title">
      <h2 id="new-webhook-title">Add a webhook</h2>
      <Field id="webhook-url" label="Receiver URL (https)" type="url" value={url} error={errors.url}
        onInput={(e) => setUrl(e.currentTarget.value)} />
      <fieldset aria-describedby={errors.events ? 'webhook-events-error' : undefined}>
        <legend>Events</legend>
        <div class="field check">
          <input type="checkbox" id="webhook-all" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
          <label for="webhook-all">All events</label>
        </div>
        {!all && eventTypes.map((t) => (
          <div class="field check">
            <input type="checkbox" id={`webhook-event-${t}`} checked={events.includes(t)} onChange={pick(t)} />
            <label for={`webhook-event-${t}`}>{t}</label>
          </div>
        ))}
        {errors.events && <p class="error" id="webhook-events-error"><span aria-hidden="true">⚠ </span>{errors.events}</p>}
      </fieldset>
      <Notice error={error} />
      <button type="submit">Add webhook</button>
    </form>
  );
}
