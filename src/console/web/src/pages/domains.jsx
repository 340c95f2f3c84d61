import { useState } from 'preact/hooks';
import { api, enc, showFailure } from '../api.js';
import { Field, Notice, PageTitle, Table, showTime, useLoad } from '../ui.jsx';
import { useVersionedEditor } from '../versioned.js';

const notFoundHint = 'An https URL that unknown slugs on this domain go to; empty: the 404 page.';

// Branded domains (issue 46): admins add them and choose the default; everyone may look.
export function Domains({ can }) {
  const [items, error, reload] = useLoad(async () => (await api('GET', '/domains')).data.items, []);
  const [chosen, setChosen] = useState(null);
  const current = items && chosen && items.find((d) => d.host === chosen);
  return (
    <>
      <PageTitle>Domains</PageTitle>
      <p>
        Each domain serves its own links at <code>/go/…</code>, so one slug may exist on several domains. Links
        without a domain are on the default one; with no domain here, that is the public base URL's host.
      </p>
      <Notice error={error} />
      {items && (
        <Table caption="Domains" head={['Host', 'Default', 'Unknown slugs go to', 'Changed', '']}
          empty="No domain yet: every link is on the public base URL's host."
          rows={items.map((d) => [d.host, d.default ? 'yes' : 'no', d.not_found || 'the 404 page',
            showTime(d.updated_at),
            <button type="button" class="secondary" onClick={() => setChosen(d.host)}>
              {can.admin ? 'Edit' : 'Show'} {d.host}
            </button>])} />
      )}
      {current && <Editor key={current.host} d={current} can={can}
        onSaved={reload} onDeleted={() => (setChosen(null), reload())} />}
      {can.admin && items && <NewDomain first={items.length === 0}
        onSaved={(host) => (setChosen(host), reload())} />}
    </>
  );
}

function Editor({ d, can, onSaved, onDeleted }) {
  const [notFound, setNotFound] = useState(d.not_found || '');
  const [makeDefault, setMakeDefault] = useState(d.default);
  const { errors, error, message, save, remove } = useVersionedEditor({
    path: `/domains/${enc(d.host)}`, version: d.version, what: 'domain', onSaved, onDeleted,
  });
  const submit = (e) => (e.preventDefault(), save({ default: makeDefault, not_found: notFound || null }));
  return (
    <section class="card" aria-labelledby="domain-title">
      <h2 id="domain-title">Domain {d.host}, version {d.version}</h2>
      <form onSubmit={submit}>
        <Field id="domain-not-found" label="Unknown slugs go to" hint={notFoundHint} value={notFound}
          readOnly={!can.admin} error={errors.not_found} onInput={(e) => setNotFound(e.currentTarget.value)} />
        <p>
          <label>
            <input type="checkbox" checked={makeDefault} disabled={!can.admin || d.default}
              onChange={(e) => setMakeDefault(e.currentTarget.checked)} /> The default domain
          </label>
        </p>
        {errors.default && <Notice error={new Error(errors.default)} />}
        <Notice error={error} />
        {message && <Notice>{message}</Notice>}
        {can.admin && <button type="submit">Save domain</button>}
        {can.admin && <button type="button" class="secondary" onClick={remove}>Delete domain {d.host}</button>}
      </form>
    </section>
  );
}

function NewDomain({ first, onSaved }) {
  const [host, setHost] = useState('');
  const [notFound, setNotFound] = useState('');
  const [makeDefault, setMakeDefault] = useState(false);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    const name = host.trim().toLowerCase();
    try {
      await api('PUT', `/domains/${enc(name)}`,
        { body: { default: first || makeDefault, not_found: notFound || null }, ifNoneMatch: '*' });
      onSaved(name);
    } catch (err) {
      if (err.status === 412) setError(new Error('That domain exists already: edit it above.'));
      else if (err.status === 404) setErrors({ host: 'must be a domain name such as go.example.com' });
      else showFailure(err, setErrors, setError);
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-domain-title">
      <h2 id="new-domain-title">Add a domain</h2>
      <Field id="new-domain-host" label="Host (e.g. go.example.com)" value={host} error={errors.host}
        onInput={(e) => setHost(e.currentTarget.value)} />
      <Field id="new-domain-not-found" label="Unknown slugs go to" hint={notFoundHint} value={notFound}
        error={errors.not_found} onInput={(e) => setNotFound(e.currentTarget.value)} />
      {first ? <p>The first domain is the default one.</p> : (
        <p>
          <label>
            <input type="checkbox" checked={makeDefault} onChange={(e) => setMakeDefault(e.currentTarget.checked)} />
            {' '}Make it the default domain
          </label>
        </p>
      )}
      <Notice error={error} />
      <button type="submit">Add domain</button>
    </form>
  );
}
