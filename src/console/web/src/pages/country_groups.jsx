import { useState } from 'preact/hooks';
import { api, enc, showFailure } from '../api.js';
import { Field, Notice, PageTitle, Table, showTime, useLoad } from '../ui.jsx';
import { useVersionedEditor } from '../versioned.js';

// A family's fallbacks as the editor types them: one "AT=DE" per line.
const asLines = (fallbacks) => Object.entries(fallbacks).map(([from, to]) => `${from}=${to}`).join('\n');
function asMap(lines) {
  const out = {};
  for (const line of lines.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const [from, to = ''] = line.split('=').map((s) => s.trim().toUpperCase());
    out[from] = to;
  }
  return out;
}
const shown = (fallbacks) => Object.entries(fallbacks).map(([from, to]) => `${from} → ${to}`).join(', ');
const hint = 'One per line: a reader\'s country, "=", the country whose store they get (e.g. AT=DE). '
  + 'Used when none of a link\'s rules matches the reader\'s own country.';

export function CountryGroups({ can }) {
  const [items, error, reload] = useLoad(async () => (await api('GET', '/country-groups')).data.items, []);
  const [chosen, setChosen] = useState(null);
  const current = items && chosen && items.find((g) => g.family === chosen);
  return (
    <>
      <PageTitle>Country groups</PageTitle>
      <p>
        A partner family (e.g. <code>amazon</code> for amazon, amazon-de, amazon-us …) sends readers from a
        country without a store of its own to a close one.
      </p>
      <Notice error={error} />
      {items && (
        <Table caption="Country groups" head={['Family', 'Fallbacks', 'Changed', 'Version', '']}
          empty="No country group yet."
          rows={items.map((g) => [g.family, shown(g.fallbacks), showTime(g.updated_at), g.version,
            <button type="button" class="secondary" onClick={() => setChosen(g.family)}>
              {can.edit ? 'Edit' : 'Show'} {g.family}
            </button>])} />
      )}
      {current && <Editor key={current.family} g={current} can={can}
        onSaved={reload} onDeleted={() => (setChosen(null), reload())} />}
      {can.edit && <NewGroup onSaved={(family) => (setChosen(family), reload())} />}
    </>
  );
}

function Editor({ g, can, onSaved, onDeleted }) {
  const [lines, setLines] = useState(asLines(g.fallbacks));
  const { errors, error, message, save, remove } = useVersionedEditor({
    path: `/country-groups/${enc(g.family)}`, version: g.version, what: 'group', onSaved, onDeleted,
  });
  const submit = (e) => (e.preventDefault(), save({ fallbacks: asMap(lines) }));
  return (
    <section class="card" aria-labelledby="group-title">
      <h2 id="group-title">Family {g.family}, version {g.version}</h2>
      <form onSubmit={submit}>
        <Field id="group-fallbacks" as="textarea" rows="6" label={`Fallbacks of ${g.family}`} hint={hint}
          value={lines} readOnly={!can.edit} error={errors.fallbacks}
          onInput={(e) => setLines(e.currentTarget.value)} />
        <Notice error={error} />
        {message && <Notice>{message}</Notice>}
        {can.edit && <button type="submit">Save group</button>}
        {can.edit && <button type="button" class="secondary" onClick={remove}>Delete group {g.family}</button>}
      </form>
    </section>
  );
}

function NewGroup({ onSaved }) {
  const [family, setFamily] = useState('');
  const [lines, setLines] = useState('');
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    try {
      await api('PUT', `/country-groups/${enc(family)}`, { body: { fallbacks: asMap(lines) }, ifNoneMatch: '*' });
      onSaved(family);
    } catch (err) {
      if (err.status === 412) setError(new Error('That family has a group already: edit it above.'));
      else if (err.status === 404) setErrors({ family: 'must be a partner slug or its prefix: a-z, 0-9 and -' });
      else showFailure(err, setErrors, setError);
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-group-title">
      <h2 id="new-group-title">Add a country group</h2>
      <Field id="new-family" label="Partner family (e.g. amazon)" value={family} error={errors.family}
        onInput={(e) => setFamily(e.currentTarget.value)} />
      <Field id="new-fallbacks" as="textarea" rows="4" label="Fallbacks" hint={hint} value={lines}
        error={errors.fallbacks} onInput={(e) => setLines(e.currentTarget.value)} />
      <Notice error={error} />
      <button type="submit">Add group</button>
    </form>
  );
}
