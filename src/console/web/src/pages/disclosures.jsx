import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, enc, showFailure } from '../api.js';
import { Field, Notice, PageTitle, Table, showTime, useLoad } from '../ui.jsx';

export function Disclosures({ can }) {
  const [items, error, reload] = useLoad(async () => (await api('GET', '/disclosures')).data.items, []);
  const [chosen, setChosen] = useState(null);
  const current = items && chosen && items.find((d) => d.key === chosen.key && d.locale === chosen.locale);
  return (
    <>
      <PageTitle>Disclosures</PageTitle>
      <Notice error={error} />
      {items && (
        <Table caption="Disclosure texts" head={['Key', 'Locale', 'Version', 'Text', '']}
          empty="No disclosure text yet."
          rows={items.map((d) => [d.key, d.locale, d.version, d.text,
            <button type="button" class="secondary" onClick={() => setChosen(d)}>
              {can.edit ? 'Edit' : 'Show'} {d.key} ({d.locale})
            </button>])} />
      )}
      {/* Keyed by text, not version: a save keeps the editor, its message and its history. */}
      {current && <Editor key={`${current.key}/${current.locale}`} d={current} can={can} onSaved={reload} />}
      {can.edit && <NewText onSaved={(d) => (setChosen(d), reload())} />}
    </>
  );
}

// The server's sanitised HTML, exactly as pages will show it.
function usePreview(text, html) {
  const [preview, setPreview] = useState({ html: '', error: null });
  useEffect(() => {
    if (!text) return setPreview({ html: '', error: null });
    const t = setTimeout(() => {
      api('POST', '/disclosures/preview', { body: html ? { text, html } : { text } }).then(
        ({ data }) => setPreview({ html: data.html, error: null }),
        (err) => setPreview({ html: '', error: err instanceof ApiError ? err.fieldErrors() : {} }),
      );
    }, 250);
    return () => clearTimeout(t);
  }, [text, html]);
  return preview;
}

function Editor({ d, can, onSaved }) {
  const [text, setText] = useState(d.text);
  const [html, setHtml] = useState(d.html_given ? d.html : '');
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [message, setMessage] = useState(null);
  const preview = usePreview(text, html);
  const path = `/disclosures/${enc(d.key)}/${enc(d.locale)}`;
  const [versions, , reloadVersions] = useLoad(async () => (await api('GET', `${path}/versions`)).data.items, [path]);
  async function save(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    try {
      await api('PUT', path, { body: html ? { text, html } : { text }, ifMatch: `"${d.version}"` });
      setMessage('Saved as a new version.');
      reloadVersions();
      onSaved();
    } catch (err) {
      if (err.status === 412) setError(new Error('Someone saved a newer version meanwhile: reload the page to see it before saving yours.'));
      else showFailure(err, setErrors, setError);
    }
  }
  return (
    <section class="card" aria-labelledby="disclosure-title">
      <h2 id="disclosure-title">{d.key} ({d.locale}), version {d.version}</h2>
      <form onSubmit={save}>
        <Field id="disclosure-text" as="textarea" rows="4" label="Text" value={text} readOnly={!can.edit}
          error={errors.text} onInput={(e) => setText(e.currentTarget.value)} />
        <Field id="disclosure-html" as="textarea" rows="4" label="HTML (optional; sanitised by the server)"
          value={html} readOnly={!can.edit} error={errors.html} onInput={(e) => setHtml(e.currentTarget.value)} />
        <h3>Preview (as readers see it)</h3>
        <div class="disclosure-preview" aria-live="polite" dangerouslySetInnerHTML={{ __html: preview.html }} />
        <Notice error={error} />
        {message && <Notice>{message}</Notice>}
        {can.edit && <button type="submit">Save text</button>}
      </form>
      {versions && (
        <Table caption="Version history" head={['Version', 'Saved', 'By', 'Text']}
          rows={versions.map((v) => [v.version, showTime(v.created_at), v.created_by, v.text])} />
      )}
    </section>
  );
}

function NewText({ onSaved }) {
  const [key, setKey] = useState('general');
  const [locale, setLocale] = useState('');
  const [text, setText] = useState('');
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    try {
      await api('PUT', `/disclosures/${enc(key)}/${enc(locale)}`, { body: { text }, ifNoneMatch: '*' });
      onSaved({ key, locale });
    } catch (err) {
      if (err.status === 412) setError(new Error('That key and locale exist already: edit it above.'));
      else showFailure(err, setErrors, setError);
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-text-title">
      <h2 id="new-text-title">Add a text</h2>
      <Field id="new-key" label="Key" value={key} error={errors.key} onInput={(e) => setKey(e.currentTarget.value)} />
      <Field id="new-locale" label="Locale (e.g. de)" value={locale} error={errors.locale} onInput={(e) => setLocale(e.currentTarget.value)} />
      <Field id="new-text" as="textarea" rows="3" label="New text" value={text} error={errors.text} onInput={(e) => setText(e.currentTarget.value)} />
      <Notice error={error} />
      <button type="submit">Add text</button>
    </form>
  );
}
