import { useState } from 'preact/hooks';
import { api, showFailure } from './api.js';

// The editor of a resource saved whole with PUT and deleted with DELETE, both under If-Match on
// the version it was read at (a domain, a country group): its field errors, its error and
// message, and the two actions. `what` names the thing when someone else changed it meanwhile
// (412).
export function useVersionedEditor({ path, version, what, onSaved, onDeleted }) {
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [message, setMessage] = useState(null);
  const ifMatch = `"${version}"`;
  // True when the save or delete lost to someone else's change, whose message it then shows.
  const stale = (err) => {
    if (err.status !== 412) return false;
    setError(new Error(`Someone changed this ${what} meanwhile: reload the page to see it first.`));
    return true;
  };
  async function save(body) {
    setErrors({});
    setError(null);
    try {
      await api('PUT', path, { body, ifMatch });
      setMessage('Saved.');
      onSaved();
    } catch (err) {
      if (!stale(err)) showFailure(err, setErrors, setError);
    }
  }
  async function remove() {
    setError(null);
    try {
      await api('DELETE', path, { ifMatch });
      onDeleted();
    } catch (err) {
      if (!stale(err)) setError(err);
    }
  }
  return { errors, error, message, save, remove };
}
