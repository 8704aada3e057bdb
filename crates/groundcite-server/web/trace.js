// The trace viewer: GET /v1/traces/{id} with the user's key; question,
// chunks, raw model output beside the verified contract, warnings, timings;
// "Re-verify" (POST /v1/traces/{id}/verify) says whether the contract is
// the same today.

import { api, ApiError, setupKey } from './api.js';
import { chunkMap, renderContract, renderPreview } from './groundcite-render.js';

const $ = (id) => document.getElementById(id);
const text = (v) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));

// The ID is the last path segment: /traces/{id}.
const traceId = (() => {
  const raw = location.pathname.replace(/^\/traces\//, '').replace(/\/.*$/, '');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw; // malformed %-escapes: the API answers 422
  }
})();
let chunks = new Map();
let opener = null;

function openPreview({ citations, source, button }) {
  opener = button;
  const id = citations[0] && typeof citations[0].chunk_id === 'string' ? citations[0].chunk_id : null;
  $('main').classList.add('split');
  $('preview').hidden = false;
  renderPreview($('preview-body'), id ? chunks.get(id) || null : null, citations, source);
  $('preview-body').querySelector('.gc-preview-title')?.focus({ preventScroll: true });
}

function closePreview() {
  $('preview').hidden = true;
  $('main').classList.remove('split');
  opener?.focus();
  opener = null;
}

function facts(dl, entries) {
  dl.replaceChildren();
  for (const [k, v] of entries) {
    if (v === null || v === undefined || v === '') continue;
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = text(v);
    dl.append(dt, dd);
  }
}

function show(trace) {
  $('question').textContent = text(trace.question) || '(no question)';
  facts($('facts'), [
    ['kind', trace.kind],
    ['created', trace.created_at],
    ['provider', trace.provider],
    ['model', trace.model],
    ['provider request', trace.provider_request_id],
    ['schema hash', trace.schema_hash],
    ['error', trace.error],
  ]);
  $('raw-output').textContent = typeof trace.raw_output === 'string' ? trace.raw_output : '(no raw output: the relevance gate answered, or generation failed)';
  chunks = chunkMap(trace.chunks);
  if (trace.contract && typeof trace.contract === 'object') {
    renderContract($('contract'), trace.contract, { onOpen: openPreview });
    $('contract-json').textContent = JSON.stringify(trace.contract, null, 2);
  } else {
    $('contract').textContent = '(no contract stored)';
  }
  const warnings = $('warnings');
  warnings.replaceChildren();
  const list = Array.isArray(trace.contract?.warnings) ? trace.contract.warnings : [];
  for (const w of list) {
    const li = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = text(w?.code);
    li.append(code, document.createTextNode(`: ${text(w?.message)}`));
    warnings.append(li);
  }
  if (!list.length) warnings.append(Object.assign(document.createElement('li'), { textContent: 'none' }));
  const timings = trace.timings && typeof trace.timings === 'object' ? Object.entries(trace.timings) : [];
  facts($('timings'), timings.map(([k, v]) => [k, typeof v === 'number' ? `${v}` : v]));
  $('options').textContent = JSON.stringify(trace.options ?? {}, null, 2);
  $('prompt').textContent = trace.prompt ? `${text(trace.prompt.system)}\n\n${text(trace.prompt.user)}` : '(no prompt)';
  const ol = $('chunks');
  ol.replaceChildren();
  for (const c of Array.isArray(trace.chunks) ? trace.chunks : []) {
    const li = document.createElement('li');
    const h = document.createElement('h3');
    h.textContent = `${text(c?.source_title) || text(c?.chunk_id)}`;
    const meta = document.createElement('p');
    meta.className = 'gc-pop-meta';
    meta.textContent = [text(c?.chunk_id), Number.isSafeInteger(c?.page_number) ? `page ${c.page_number}` : '', typeof c?.score === 'number' ? `score ${c.score.toFixed(3)}` : ''].filter(Boolean).join(' · ');
    const pre = document.createElement('pre');
    pre.className = 'chunk-text';
    pre.textContent = text(c?.content);
    li.append(h, meta, pre);
    ol.append(li);
  }
}

async function reverify() {
  $('reverify').disabled = true;
  $('reverify-result').textContent = 'Re-verifying…';
  try {
    const r = await (await api(`/v1/traces/${encodeURIComponent(traceId)}/verify`, { method: 'POST' })).json();
    const same = r.same === true;
    const result = $('reverify-result');
    result.dataset.same = String(same);
    result.textContent = same
      ? 'Same: re-verification gives the stored contract.'
      : `Different: re-verification gives another contract${typeof r.note === 'string' ? ` (${r.note})` : ''}.`;
    if (!same) renderContract($('reverify-contract'), r.contract, { onOpen: openPreview });
    else $('reverify-contract').replaceChildren();
  } catch (e) {
    $('reverify-result').textContent = e instanceof ApiError ? `${e.code}: ${e.message}` : `Error: ${e.message}`;
  } finally {
    $('reverify').disabled = false;
  }
}

async function load() {
  $('status').textContent = 'Loading…';
  try {
    const trace = await (await api(`/v1/traces/${encodeURIComponent(traceId)}`)).json();
    show(trace);
    $('status').textContent = '';
  } catch (e) {
    $('status').textContent = e instanceof ApiError ? `${e.code}: ${e.message}` : `Error: ${e.message}`;
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('trace-id').textContent = traceId;
  $('reverify').addEventListener('click', reverify);
  $('preview-close').addEventListener('click', closePreview);
  $('preview').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') closePreview();
  });
  setupKey(load);
});
