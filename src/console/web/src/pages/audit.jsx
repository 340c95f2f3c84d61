import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { Field, Notice, PageTitle, Table, localToUtc, showTime, useLoad } from '../ui.jsx';

export function Audit({ can }) {
  const [f, setF] = useState({ entity: '', slug: '', actor: '', since: '', until: '' });
  const [items, error] = useLoad(async () => {
    if (!can.admin) return [];
    const q = query({ ...f, since: f.since && localToUtc(f.since), until: f.until && localToUtc(f.until), limit: 100 });
    return (await api('GET', `/audit${q}`)).data.items;
  }, [f]);
  const set = (k) => (e) => setF({ ...f, [k]: e.currentTarget.value });
  if (!can.admin) return (<><PageTitle>Audit</PageTitle><p>Only admins can read the audit trail.</p></>);
  return (
    <>
      <PageTitle>Audit</PageTitle>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <Field id="audit-entity" as="select" label="Entity" value={f.entity} onChange={set('entity')}>
          <option value="">Any</option>
          {['partner', 'link', 'disclosure', 'token', 'user'].map((e) => <option value={e}>{e}</option>)}
        </Field>
        <Field id="audit-slug" label="Slug or name" value={f.slug} onChange={set('slug')} />
        <Field id="audit-actor" label="Actor (exact, e.g. user:alice)" value={f.actor} onChange={set('actor')} />
        <Field id="audit-since" type="datetime-local" label="Since" value={f.since} onChange={set('since')} />
        <Field id="audit-until" type="datetime-local" label="Until" value={f.until} onChange={set('until')} />
      </form>
      <Notice error={error} />
      {items && (
        <Table caption="Audit trail (newest first)" head={['When', 'Actor', 'Entity', 'Slug', 'Action', 'Change']}
          empty="No entry matches."
          rows={items.map((a) => [showTime(a.at), a.actor, a.entity, a.slug, a.action,
            <details><summary>Before and after</summary><pre>{JSON.stringify({ before: a.before, after: a.after }, null, 2)}</pre></details>])} />
      )}
    </>
  );
}
