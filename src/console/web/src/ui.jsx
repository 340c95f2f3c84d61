import { useEffect, useRef, useState } from 'preact/hooks';

// A labelled control with its error as text, aria-invalid and aria-describedby (never colour
// alone). `as` picks input, textarea or select.
export function Field({ id, label, error, hint, as = 'input', children, ...rest }) {
  const Tag = as;
  // A value set without typing and announced by a change event alone (a password manager,
  // autofill, WebDriver's Element Clear) is taken too; otherwise the next render would put the
  // old value back into the field.
  if (rest.onInput && !rest.onChange) rest.onChange = rest.onInput;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {hint && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      <Tag
        id={id}
        name={id}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described || undefined}
        {...rest}
      >
        {children}
      </Tag>
      {error && (
        <p class="error" id={`${id}-error`}>
          <span aria-hidden="true">⚠ </span>
          {error}
        </p>
      )}
    </div>
  );
}

// A read-only value with a button that copies it (or selects it where the clipboard is refused).
export function CopyField({ id, label, value }) {
  const [copied, setCopied] = useState('');
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      document.getElementById(id).select();
      setCopied('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  }
  return (
    <div class="copy">
      <Field id={id} label={label} as="textarea" rows="2" readOnly value={value} />
      <button type="button" class="secondary" onClick={copy}>Copy {label.toLowerCase()}</button>
      <span role="status">{copied}</span>
    </div>
  );
}

export function Check({ id, label, ...rest }) {
  return (
    <div class="field check">
      <input type="checkbox" id={id} name={id} {...rest} />
      <label for={id}>{label}</label>
    </div>
  );
}

// An error or notice for the whole form, announced to screen readers.
export function Notice({ error, children, kind }) {
  if (!error && !children) return null;
  const text = error ? error.message || String(error) : children;
  const cls = error || kind === 'error' ? 'notice error-box' : 'notice ok-box';
  return (
    <div class={cls} role={error || kind === 'error' ? 'alert' : 'status'}>
      {error || kind === 'error' ? <strong>Error: </strong> : null}
      {text}
    </div>
  );
}

// A table in a region that scrolls sideways on a phone and can be reached by keyboard.
export function Table({ caption, head, rows, empty = 'Nothing yet.' }) {
  if (!rows.length) {
    return (
      <p class="empty">
        <strong>{caption}:</strong> {empty}
      </p>
    );
  }
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabindex="0">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>
              {r.map((c) => (
                <td>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// Loads once per change of `deps`; returns [value, error, reload].
export function useLoad(load, deps) {
  const [state, setState] = useState({ value: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (value) => live && setState({ value, error: null }),
      (error) => live && setState({ value: null, error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return [state.value, state.error, () => setTick((t) => t + 1)];
}

// The page's heading takes focus when the page changes, so keyboard and screen reader users
// start at the top of the new page; but not from someone already in the new page's content (the
// effect runs after a paint, and taking focus then cut off typing into the sign-in form's Name).
export function PageTitle({ children }) {
  const ref = useRef(null);
  useEffect(() => {
    const active = document.activeElement;
    if (active && active !== document.body && ref.current?.closest('main')?.contains(active)) return;
    ref.current?.focus();
  }, [children]);
  return (
    <h1 tabindex="-1" ref={ref}>
      {children}
    </h1>
  );
}

export function downloadText(name, text, type = 'text/csv') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function csv(rows) {
  const cell = (v) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

// "2026-12-01T09:30" in the browser's zone <-> "2026-12-01T08:30:00Z".
export function localToUtc(local) {
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) return null;
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
export function utcToLocalInput(utc) {
  if (!utc) return '';
  const d = new Date(utc);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(
    d.getMinutes(),
  )}`;
}
export function showTime(utc) {
  if (!utc) return '—';
  const d = new Date(utc);
  return Number.isNaN(d.getTime()) ? utc : d.toLocaleString();
}
export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

// 412 on a save: both versions side by side; Reload drops ours, Overwrite saves ours again over
// theirs with their ETag.
export function Conflict({ yours, theirs, onReload, onOverwrite }) {
  return (
    <section class="conflict" role="alert" aria-labelledby="conflict-title">
      <h2 id="conflict-title">Someone else changed this while you were editing</h2>
      <p>Your change was not saved. Compare both versions, then reload theirs or overwrite it with yours.</p>
      <div class="side-by-side">
        <div>
          <h3>Yours (not saved)</h3>
          <pre>{JSON.stringify(yours, null, 2)}</pre>
        </div>
        <div>
          <h3>Theirs (saved now)</h3>
          <pre>{JSON.stringify(theirs, null, 2)}</pre>
        </div>
      </div>
      <div class="actions">
        <button type="button" onClick={onReload}>
          Reload
        </button>
        <button type="button" class="danger" onClick={onOverwrite}>
          Overwrite
        </button>
      </div>
    </section>
  );
}
