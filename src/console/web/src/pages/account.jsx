import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Field, Notice, PageTitle } from '../ui.jsx';

const empty = { current: '', next: '', again: '' };

// The signed-in person's own account: their password, changed with the current one.
export function Account({ session }) {
  const [v, setV] = useState(empty);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [message, setMessage] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(e) {
    e.preventDefault();
    setErrors({});
    setError(null);
    setMessage(null);
    if (v.next !== v.again) {
      setErrors({ again: 'does not match the new password' });
      return;
    }
    setBusy(true);
    try {
      await api('PUT', '/session/password', { body: { current: v.current, new: v.next } });
      setV(empty);
      setMessage('Your password has been changed; your other sessions have ended.');
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) {
        const fields = err.fieldErrors();
        setErrors({ current: fields.current, next: fields.new });
        if (!fields.current && !fields.new) setError(err);
      } else if (err instanceof ApiError && err.status === 429) {
        setError(new Error('Too many wrong passwords; wait a few minutes and try again.'));
      } else {
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  }
  const set = (k) => (e) => setV({ ...v, [k]: e.currentTarget.value });

  return (
    <>
      <PageTitle>Your account</PageTitle>
      <p>
        Signed in as <strong>{session.user.name}</strong> ({session.user.role}).
      </p>
      <form class="card" onSubmit={submit} aria-labelledby="password-title">
        <h2 id="password-title">Change your password</h2>
        {/* The user name lets a password manager file the new password under this account. */}
        <input type="text" name="username" autocomplete="username" value={session.user.name} hidden readonly />
        <Field id="current-password" type="password" label="Current password" autocomplete="current-password"
          required value={v.current} error={errors.current} onInput={set('current')} />
        <Field id="new-password" type="password" label="New password" autocomplete="new-password" required
          hint="At least 12 characters. Not your user name, not one short sequence repeated, not a commonly used password; no other rules."
          value={v.next} error={errors.next} onInput={set('next')} />
        <Field id="new-password-again" type="password" label="New password again" autocomplete="new-password"
          required value={v.again} error={errors.again} onInput={set('again')} />
        <Notice error={error} />
        {message && <Notice>{message}</Notice>}
        <button type="submit" disabled={busy}>
          Change password
        </button>
      </form>
    </>
  );
}
