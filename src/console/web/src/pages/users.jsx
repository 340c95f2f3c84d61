import { useState } from 'preact/hooks';
import { api, ApiError, enc, showFailure } from '../api.js';
import { Field, Notice, PageTitle, Table, showTime, useLoad } from '../ui.jsx';

const roles = ['viewer', 'editor', 'admin'];

export function Users({ can }) {
  const [users, error, reload] = useLoad(async () => (can.admin ? (await api('GET', '/users')).data.items : []), []);
  const [tokens, tokenError, reloadTokens] = useLoad(async () => (can.admin ? (await api('GET', '/tokens')).data.items : []), []);
  const [message, setMessage] = useState(null);
  const [actionError, setActionError] = useState(null);
  if (!can.admin) return (<><PageTitle>Users and tokens</PageTitle><p>Only admins manage users and tokens.</p></>);

  async function act(fn, done) {
    setActionError(null);
    setMessage(null);
    try {
      setMessage(await fn());
    } catch (err) {
      // A refused password says which rule it breaks ("password must be at least 12 ...").
      const fields = err instanceof ApiError && err.status === 422 ? Object.entries(err.fieldErrors()) : [];
      setActionError(fields.length ? new Error(fields.map(([f, m]) => `${f} ${m}`).join('; ')) : err);
    }
    done();
  }
  const patchUser = (u, patch, text) => act(async () => {
    await api('PATCH', `/users/${enc(u.name)}`, { body: patch, ifMatch: `"${u.version}"` });
    return text;
  }, reload);
  const setPassword = (u) => {
    const password = prompt(`New password for ${u.name} (12 characters or more, not their name, not a common one)`);
    if (password) patchUser(u, { password }, `Password of ${u.name} changed; their other sessions ended.`);
  };
  return (
    <>
      <PageTitle>Users and tokens</PageTitle>
      <Notice error={error || tokenError || actionError} />
      {message && <Notice>{message}</Notice>}
      {users && (
        <Table caption="Users" head={['Name', 'Role', 'State', 'Last sign-in', 'Actions']}
          rows={users.map((u) => [u.name, u.role, u.disabled ? 'disabled' : 'active', showTime(u.last_sign_in_at),
            <div class="actions">
              <label class="sr-only" for={`role-${u.name}`}>Role of {u.name}</label>
              <select id={`role-${u.name}`} value={u.role}
                onChange={(e) => patchUser(u, { role: e.currentTarget.value }, `${u.name} is now ${e.currentTarget.value}.`)}>
                {roles.map((r) => <option value={r}>{r}</option>)}
              </select>
              <button type="button" class="secondary" onClick={() => patchUser(u, { disabled: !u.disabled },
                u.disabled ? `${u.name} enabled.` : `${u.name} disabled; their sessions ended.`)}>
                {u.disabled ? 'Enable' : 'Disable'} {u.name}
              </button>
              <button type="button" class="secondary" onClick={() => setPassword(u)}>Set password of {u.name}</button>
            </div>])} />
      )}
      <NewUser onCreated={(text) => (setMessage(text), reload())} />
      {tokens && (
        <Table caption="API tokens" head={['Name', 'Role', 'Scopes', 'Restricted to', 'Expires', 'Created', 'Last used', 'State', '']}
          rows={tokens.map((t) => [t.name, t.role, (t.scopes || []).join(', '), restrictions(t),
            t.expires_at ? showTime(t.expires_at) : 'never', showTime(t.created_at), t.last_used_on || '—',
            t.revoked_at ? `revoked ${showTime(t.revoked_at)}` : 'active',
            t.revoked_at ? '' : <button type="button" class="secondary" onClick={() => act(async () => {
              await api('DELETE', `/tokens/${enc(t.name)}`, { ifMatch: '*' });
              return `Token ${t.name} revoked.`;
            }, reloadTokens)}>Revoke token {t.name}</button>])} />
      )}
      <NewToken onCreated={(text) => (setMessage(text), reloadTokens())} />
    </>
  );
}

function NewUser({ onCreated }) {
  const [v, setV] = useState({ name: '', role: 'editor', password: '' });
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    try {
      const body = { name: v.name, role: v.role, ...(v.password ? { password: v.password } : {}) };
      const { data } = await api('POST', '/users', { body });
      onCreated(data.password ? `User ${v.name} created. Their password (shown once): ${data.password}` : `User ${v.name} created.`);
      setV({ name: '', role: 'editor', password: '' });
    } catch (err) {
      showFailure(err, setErrors, setError);
    }
  }
  const set = (k) => (e) => setV({ ...v, [k]: e.currentTarget.value });
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-user-title">
      <h2 id="new-user-title">Add a user</h2>
      <Field id="user-name" label="User name" value={v.name} error={errors.name} onInput={set('name')} />
      <Field id="user-role" as="select" label="User role" value={v.role} error={errors.role} onChange={set('role')}>
        {roles.map((r) => <option value={r}>{r}</option>)}
      </Field>
      <Field id="user-password" type="password" label="Initial password (empty: generate one)" autocomplete="new-password"
        value={v.password} error={errors.password} onInput={set('password')} />
      <Notice error={error} />
      <button type="submit">Add user</button>
    </form>
  );
}

// A token's partner and domain restrictions (issue 46), or "everything".
function restrictions(t) {
  const parts = [];
  if (t.partners && t.partners.length) parts.push(`partners ${t.partners.join(', ')}`);
  if (t.domains && t.domains.length) parts.push(`domains ${t.domains.join(', ')}`);
  return parts.length ? parts.join('; ') : 'everything';
}

// "a, b c" -> ["a", "b", "c"]
const words = (text) => text.split(/[\s,]+/).filter((w) => w);

const emptyToken = { name: '', role: 'viewer', scopes: '', partners: '', domains: '', expires_at: '' };

function NewToken({ onCreated }) {
  const [v, setV] = useState(emptyToken);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    try {
      const body = { name: v.name, role: v.role, partners: words(v.partners), domains: words(v.domains) };
      if (words(v.scopes).length) body.scopes = words(v.scopes);
      if (v.expires_at) body.expires_at = v.expires_at;
      const { data } = await api('POST', '/tokens', { body });
      onCreated(`Token ${v.name} created. Copy it now, it is shown once: ${data.token}`);
      setV(emptyToken);
    } catch (err) {
      showFailure(err, setErrors, setError);
    }
  }
  const set = (k) => (e) => setV({ ...v, [k]: e.currentTarget.value });
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-token-title">
      <h2 id="new-token-title">Add an API token</h2>
      <Field id="token-name" label="Token name" value={v.name} error={errors.name} onInput={set('name')} />
      <Field id="token-role" as="select" label="Token role" value={v.role} error={errors.role} onChange={set('role')}>
        {roles.map((r) => <option value={r}>{r}</option>)}
      </Field>
      <Field id="token-scopes" label="Scopes (e.g. links:read links:write; empty: all the role allows)" value={v.scopes}
        error={errors.scopes} onInput={set('scopes')} />
      <Field id="token-partners" label="Only these partners (slugs; empty: all)" value={v.partners}
        error={errors.partners} onInput={set('partners')} />
      <Field id="token-domains" label="Only links on these domains (hosts; empty: all)" value={v.domains}
        error={errors.domains} onInput={set('domains')} />
      <Field id="token-expires" label="Expires at (e.g. 2027-06-30T00:00:00Z; empty: never)" value={v.expires_at}
        error={errors.expires_at} onInput={set('expires_at')} />
      <Notice error={error} />
      <button type="submit">Add token</button>
    </form>
  );
}
