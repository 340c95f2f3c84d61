// The one way the console talks to /api/v1: same origin, the session cookie, X-CSRF-Token on
// every unsafe call, and a 401 anywhere sends the editor back to sign-in.
let csrfToken = null;
let authLost = () => {};

export function setCsrfToken(token) {
  csrfToken = token;
}
export function onAuthLost(callback) {
  authLost = callback;
}

export class ApiError extends Error {
  constructor(status, body, etag) {
    const problem = body && typeof body === 'object' ? body : {};
    super(problem.detail || problem.title || (typeof body === 'string' && body) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.etag = etag;
  }
  // The 422's messages by field ("allowed_domains[1]" counts for "allowed_domains"); a targeting
  // rule's keep their whole path ("rules[0].split[1].weight"): the rules form shows each beside
  // its own field.
  fieldErrors() {
    const out = {};
    for (const e of this.problem.errors || []) {
      const path = String(e.field || '');
      const field = path.startsWith('rules[') ? path : path.replace(/[[.].*$/, '');
      out[field] = out[field] ? `${out[field]}; ${e.message}` : e.message;
    }
    return out;
  }
}

// A failed save shown where the editor looks: a 422's messages beside their fields, anything
// else in the form's notice.
export function showFailure(err, setErrors, setError) {
  if (err instanceof ApiError && err.status === 422) setErrors(err.fieldErrors());
  else setError(err);
}

const unsafe = (method) => !['GET', 'HEAD'].includes(method);

// A read answered 503 with Retry-After (the admin API's database was busy past its wait) is tried
// again as told, a few times and for a few seconds at most, before the page shows the error. Writes
// are never repeated: the editor decides.
const kReadAttempts = 3;
const kMaxRetryAfterSeconds = 5;
const retryAfter = (response) => {
  const seconds = Number(response.headers.get('Retry-After'));
  return response.status === 503 && Number.isInteger(seconds) && seconds >= 0 && seconds <= kMaxRetryAfterSeconds
    ? seconds
    : null;
};

export async function api(method, path, options = {}) {
  const headers = { Accept: 'application/json', ...(options.headers || {}) };
  let body = options.body;
  if (body !== undefined && typeof body !== 'string') {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(body);
  } else if (body !== undefined) {
    headers['Content-Type'] = options.contentType || 'text/plain';
  }
  if (unsafe(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  if (options.ifMatch) headers['If-Match'] = options.ifMatch;
  if (options.ifNoneMatch) headers['If-None-Match'] = options.ifNoneMatch;
  const send = () => fetch(`/api/v1${path}`, { method, headers, body, credentials: 'same-origin', cache: 'no-store' });
  let response = await send();
  for (let attempt = 1; attempt < kReadAttempts && !unsafe(method); attempt++) {
    const seconds = retryAfter(response);
    if (seconds === null) break;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    response = await send();
  }
  const type = response.headers.get('Content-Type') || '';
  let data = null;
  if (response.status !== 204) {
    data = type.includes('json') ? await response.json().catch(() => null) : await response.text();
  }
  const etag = response.headers.get('ETag');
  if (response.status === 401 && !options.noAuthRedirect) authLost();
  if (!response.ok) throw new ApiError(response.status, data, etag);
  return { data, etag, status: response.status, headers: response.headers };
}

// Query string from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '' && v !== false) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;
