// First: every module after it may read navigator.language.
import './locale.js';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onAuthLost, setCsrfToken } from './api.js';
import { SignIn } from './pages/signin.jsx';
import { Home } from './pages/home.jsx';
import { PartnerList, PartnerPage } from './pages/partners.jsx';
import { LinkList, LinkPage } from './pages/links.jsx';
import { Bulk } from './pages/bulk.jsx';
import { Disclosures } from './pages/disclosures.jsx';
import { CountryGroups } from './pages/country_groups.jsx';
import { Domains } from './pages/domains.jsx';
import { Stats } from './pages/stats.jsx';
import { Earnings } from './pages/earnings.jsx';
import { Audit } from './pages/audit.jsx';
import { Users } from './pages/users.jsx';
import { Webhooks } from './pages/webhooks.jsx';
import { Account } from './pages/account.jsx';

const pages = [
  { path: 'home', label: 'Today' },
  { path: 'partners', label: 'Partners' },
  { path: 'links', label: 'Links' },
  { path: 'bulk', label: 'Bulk' },
  { path: 'disclosures', label: 'Disclosures' },
  { path: 'country-groups', label: 'Country groups' },
  { path: 'domains', label: 'Domains' },
  { path: 'stats', label: 'Stats' },
  { path: 'earnings', label: 'Earnings' },
  { path: 'audit', label: 'Audit', admin: true },
  { path: 'users', label: 'Users and tokens', admin: true },
  { path: 'webhooks', label: 'Webhooks', admin: true },
  { path: 'account', label: 'Your account' },
];

function currentRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  // A link on another domain than the default: #/links/<slug>/<host> (issue 46).
  return { page: parts[0] || 'home', id: parts[1] || null, domain: parts[2] || null };
}

function Page({ route, session }) {
  const can = { edit: session.user.role !== 'viewer', admin: session.user.role === 'admin' };
  const props = { session, can, id: route.id, domain: route.domain };
  switch (route.page) {
    case 'home':
      return <Home {...props} />;
    case 'partners':
      return route.id ? <PartnerPage {...props} /> : <PartnerList {...props} />;
    case 'links':
      return route.id ? <LinkPage {...props} /> : <LinkList {...props} />;
    case 'bulk':
      return <Bulk {...props} />;
    case 'disclosures':
      return <Disclosures {...props} />;
    case 'country-groups':
      return <CountryGroups {...props} />;
    case 'domains':
      return <Domains {...props} />;
    case 'stats':
      return <Stats {...props} />;
    case 'earnings':
      return <Earnings {...props} />;
    case 'audit':
      return <Audit {...props} />;
    case 'users':
      return <Users {...props} />;
    case 'webhooks':
      return <Webhooks {...props} />;
    case 'account':
      return <Account {...props} />;
    default:
      return <p>No such page. Choose one from the menu.</p>;
  }
}

function App() {
  const [session, setSession] = useState(undefined);
  const [notice, setNotice] = useState('');
  const [route, setRoute] = useState(currentRoute());

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    onAuthLost(() => {
      setCsrfToken(null);
      setSession((s) => {
        if (s) setNotice('Your session has ended. Sign in again.');
        return null;
      });
    });
    api('GET', '/session', { noAuthRedirect: true }).then(
      ({ data }) => signedIn(data),
      () => setSession(null),
    );
    return () => removeEventListener('hashchange', onHash);
  }, []);

  function signedIn(data) {
    setCsrfToken(data.csrf_token);
    setNotice('');
    setSession(data);
  }

  async function signOut() {
    try {
      await api('DELETE', '/session', { noAuthRedirect: true });
    } catch {
      // Signed out either way: the cookie is gone or the session already ended.
    }
    setCsrfToken(null);
    setNotice('You have signed out.');
    setSession(null);
  }

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn notice={notice} onSignedIn={signedIn} />;
  const admin = session.user.role === 'admin';
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main').focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">refgate</span>
        <nav aria-label="Main">
          <ul>
            {pages
              .filter((p) => admin || !p.admin)
              .map((p) => (
                <li>
                  <a href={`#/${p.path}`} aria-current={route.page === p.path ? 'page' : undefined}>
                    {p.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <span class="who">
          {session.user.name} ({session.user.role})
        </span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabindex="-1">
        <Page route={route} session={session} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app'));
