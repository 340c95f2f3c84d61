// A link's health on its page: the confirmed state as a badge, a finding still waiting for its
// second check, the last check's hop chain (the referral code shown in each URL) and, for
// editors, a check now.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.js';
import { Notice, showTime, useLoad } from '../ui.jsx';

export function LinkHealth({ slug, can }) {
  const [health, error, reload] = useLoad(async () => (await api('GET', `/links/${enc(slug)}/health`)).data, [slug]);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState(null);
  async function checkNow() {
    setBusy(true);
    setFailure(null);
    try {
      await api('POST', `/links/${enc(slug)}/health/check`);
      reload();
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
    }
  }
  if (error) return <Notice error={error} />;
  if (!health) return null;
  return (
    <section class="card" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {health.state
        ? <p><span class={`badge badge-${health.state === 'ok' ? 'ok' : 'bad'}`}>{health.state}</span>
            {health.detail ? ` ${health.detail}` : ''}; last checked {showTime(health.checked_at)}.</p>
        : <p>Not checked yet.</p>}
      {health.pending && <p class="notice">Seen once, waiting for a second check at {showTime(health.pending.confirm_at)}: {health.pending.state} {health.pending.detail}</p>}
      {health.chain.length > 0 && (
        <ol class="chain" aria-label="Hops of the last check">
          {health.chain.map((hop, i) => <li key={i}><code>{hop.failure || hop.status}</code> {hop.url}</li>)}
        </ol>
      )}
      <Notice error={failure} />
      {can.edit && <button type="button" class="secondary" disabled={busy} onClick={checkNow}>{busy ? 'Checking…' : 'Check now'}</button>}
    </section>
  );
}
