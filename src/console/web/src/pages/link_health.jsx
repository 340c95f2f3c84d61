// A link's health on its page: the confirmed state as a badge, a finding still waiting for its
// second check, the last check's hop chain (the referral code shown in each URL) and, for
// editors, a check now. A link with targeting rules has one Location per branch, each checked:
// the link's state is its worst branch's, and each branch is shown with its own chain.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.js';
import { Notice, showTime, useLoad } from '../ui.jsx';

const branchName = (b) => (b === 'default' ? 'the link\'s own destination' : b);

function Badge({ state }) {
  return <span class={`badge badge-${state === 'ok' ? 'ok' : 'bad'}`}>{state}</span>;
}

function Chain({ chain, label }) {
  if (!chain || chain.length === 0) return null;
  return (
    <ol class="chain" aria-label={label}>
      {chain.map((hop, i) => <li key={i}><code>{hop.failure || hop.status}</code> {hop.url}</li>)}
    </ol>
  );
}

function Pending({ pending }) {
  if (!pending) return null;
  return <p class="notice">Seen once, waiting for a second check at {showTime(pending.confirm_at)}: {pending.state} {pending.detail}</p>;
}

function Branches({ branches }) {
  return (
    <ul class="branches" aria-label="Branches">
      {branches.map((b) => (
        <li key={b.branch}>
          <p><strong>{branchName(b.branch)}</strong>: <Badge state={b.state} />{b.detail ? ` ${b.detail}` : ''}</p>
          <Pending pending={b.pending} />
          <Chain chain={b.chain} label={`Hops of ${b.branch}`} />
        </li>
      ))}
    </ul>
  );
}

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
  const branches = health.branches || [];
  const several = branches.length > 1;
  return (
    <section class="card" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {health.state
        ? <p><Badge state={health.state} />
            {health.detail ? ` ${health.detail}` : ''}{several ? ` (worst branch: ${branchName(health.branch)})` : ''}; last checked {showTime(health.checked_at)}.</p>
        : <p>Not checked yet.</p>}
      {several
        ? <Branches branches={branches} />
        : <>
            <Pending pending={health.pending} />
            <Chain chain={health.chain} label="Hops of the last check" />
          </>}
      <Notice error={failure} />
      {can.edit && <button type="button" class="secondary" disabled={busy} onClick={checkNow}>{busy ? 'Checking…' : 'Check now'}</button>}
    </section>
  );
}
