import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Field, Notice, PageTitle, Table } from '../ui.jsx';

const describe = (v) => (v === undefined || v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

// Dry run first; Apply sends the same file again without dry_run (all or nothing on the server).
export function Bulk({ can }) {
  const [file, setFile] = useState(null);
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [applied, setApplied] = useState(null);

  async function send(dryRun) {
    setError(null);
    const text = await file.text();
    const csv = /\.csv$/i.test(file.name) || !/^\s*[{[]/.test(text);
    try {
      const { data } = await api('POST', `/import${dryRun ? '?dry_run=1' : ''}`, {
        body: text, contentType: csv ? 'text/csv' : 'application/json',
      });
      return data;
    } catch (err) {
      if (err.status === 422 && err.problem.refused) return err.problem;
      throw err;
    }
  }
  async function dryRun(e) {
    e.preventDefault();
    setApplied(null);
    setResult(null);
    if (!file) return setError(new Error('Choose a file first.'));
    try {
      setResult(await send(true));
    } catch (err) {
      setError(err);
    }
  }
  async function apply() {
    try {
      const data = await send(false);
      if (data.applied) {
        setApplied(`Applied: ${data.created.length} created, ${data.changed.length} changed, ${data.unchanged} unchanged.`);
        setResult(null);
      } else setResult(data);
    } catch (err) {
      setError(err);
    }
  }
  return (
    <>
      <PageTitle>Bulk import and export</PageTitle>
      <section class="card" aria-labelledby="export-title">
        <h2 id="export-title">Export</h2>
        <ul class="inline">
          <li><a href="/api/v1/export" download="refgate-export.json">Download export (JSON)</a></li>
          <li><a href="/api/v1/export?format=csv" download="refgate-links.csv">Download links (CSV)</a></li>
        </ul>
      </section>
      {can.edit ? (
        <form class="card" onSubmit={dryRun} aria-labelledby="import-title">
          <h2 id="import-title">Import</h2>
          <Field id="bulk-file" type="file" label="Import file (JSON import document or links CSV)"
            accept=".json,.csv,application/json,text/csv"
            hint="CSV header: slug,partner,destination,status,expires_at,fallback,utm_passthrough"
            onChange={(e) => (setFile(e.currentTarget.files[0] || null), setResult(null))} />
          <button type="submit">Check (dry run)</button>
        </form>
      ) : <p class="notice">You have the viewer role: you can export but not import.</p>}
      <Notice error={error} />
      {applied && <Notice>{applied}</Notice>}
      {result && <DryRun result={result} onApply={apply} />}
    </>
  );
}

function DryRun({ result, onApply }) {
  const refused = result.refused || [];
  return (
    <section aria-labelledby="dry-run-title">
      <h2 id="dry-run-title">Dry run: what this file would do</h2>
      <p role="status">
        {result.created.length} to create, {result.changed.length} to change, {result.unchanged} unchanged,{' '}
        {refused.length} refused.
      </p>
      <Table caption="Would be created" head={['Entity', 'Slug', 'Values']} empty="Nothing to create."
        rows={result.created.map((c) => [c.entity, c.slug, <code class="break">{describe(c.after)}</code>])} />
      <Table caption="Would be changed" head={['Entity', 'Slug', 'Before', 'After']} empty="Nothing to change."
        rows={result.changed.map((c) => [c.entity, c.slug, <code class="break">{describe(c.before)}</code>,
          <code class="break">{describe(c.after)}</code>])} />
      <Table caption="Refused" head={['Entity', 'Slug', 'Field', 'Reason']} empty="Nothing refused."
        rows={refused.map((r) => [r.entity, r.slug, r.field, r.message])} />
      {refused.length ? (
        <p class="notice error-box" role="alert">
          <strong>Not applicable: </strong>fix the refused entries and check again (nothing is applied while any is refused).
        </p>
      ) : (
        <button type="button" onClick={onApply}>Apply</button>
      )}
    </section>
  );
}
