// The page's link to the API: the key (asked once, kept in sessionStorage
// for this tab only, sent only as an Authorization header to this origin,
// never put in a URL or logged) and authenticated fetches.

const KEY = 'groundcite.api_key';

export function getKey() {
  try {
    return sessionStorage.getItem(KEY) || '';
  } catch {
    return '';
  }
}

export function setKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage disabled: the key lives as long as the page.
  }
}

/** An error from the API, with its stable code. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** fetch() against this origin with the key; throws ApiError on non-2xx. */
export async function api(path, { method = 'GET', body, accept, signal } = {}) {
  const headers = {};
  const key = getKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (accept) headers.Accept = accept;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!response.ok) {
    let code = 'http_error';
    let message = `HTTP ${response.status}`;
    try {
      const e = (await response.json()).error;
      if (e && typeof e.code === 'string') code = e.code;
      if (e && typeof e.message === 'string') message = e.message;
    } catch {
      // not the error shape
    }
    throw new ApiError(response.status, code, message);
  }
  return response;
}

/**
 * Wires the key form (#key-form) and the "Forget key" button; calls
 * `onReady(info)` with GET /v1/info once a key works (at once when the
 * stored key works, or the service runs without keys).
 */
export function setupKey(onReady) {
  const form = document.getElementById('key-form');
  const input = document.getElementById('key-input');
  const status = document.getElementById('key-status');
  const forget = document.getElementById('key-forget');
  const main = document.getElementById('main');
  const tryKey = async () => {
    try {
      const info = await (await api('/v1/info')).json();
      form.hidden = true;
      main.hidden = false;
      forget.hidden = !getKey();
      status.textContent = info && typeof info.tenant === 'string' ? `tenant ${info.tenant}` : 'no key needed';
      onReady(info);
    } catch (e) {
      main.hidden = true;
      form.hidden = false;
      forget.hidden = true;
      status.textContent = '';
      const msg = document.getElementById('key-message');
      msg.textContent = e instanceof ApiError && e.status === 401
        ? (getKey() ? 'That key was not accepted.' : 'This service needs an API key.')
        : `The service could not be reached: ${e.message}`;
      input.focus();
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    setKey(input.value.trim());
    input.value = '';
    tryKey();
  });
  forget.addEventListener('click', () => {
    setKey('');
    tryKey();
  });
  tryKey();
}
