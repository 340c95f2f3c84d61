import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Field, Notice, PageTitle } from '../ui.jsx';

export function SignIn({ notice, onSignedIn }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { data } = await api('POST', '/session', { body: { name, password }, noAuthRedirect: true });
      setPassword('');
      onSignedIn(data);
    } catch (err) {
      setError(err.status === 429 ? new Error('Too many failed attempts; wait a minute and try again.') : err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="signin">
      <PageTitle>Sign in to refgate</PageTitle>
      {notice && <Notice>{notice}</Notice>}
      <form onSubmit={submit}>
        <Field id="signin-name" label="Name" value={name} autocomplete="username" required
          onInput={(e) => setName(e.currentTarget.value)} />
        <Field id="signin-password" label="Password" type="password" value={password}
          autocomplete="current-password" required onInput={(e) => setPassword(e.currentTarget.value)} />
        <Notice error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
