// The main page: ask against the service's corpus (POST /v1/ask, streamed)
// or verify pasted chunks and an answer (POST /v1/verify, or /v1/parse for
// prose), render the contract, preview a cited chunk side by side.

import { api, ApiError, setupKey } from './api.js';
import { chunkMap, readEventStream, renderContract, renderPreview, streamRenderer } from './groundcite-render.js';

const $ = (id) => document.getElementById(id);

/** Chunk texts of the answer on screen, by chunk_id (for the preview). */
let chunks = new Map();
/** The marker whose preview is open (focus returns there on close). */
let previewOpener = null;

function status(text) {
  $('status').textContent = text;
}

/** The PDF a chunk of the service's corpus came from (the page previewer). */
async function loadDocument(chunkId) {
  const r = await api(`/v1/chunks/${encodeURIComponent(chunkId)}/document`);
  return r.arrayBuffer();
}

function openPreview({ citations, source, button }) {
  previewOpener = button;
  const chunkId = citations[0] && typeof citations[0].chunk_id === 'string' ? citations[0].chunk_id : null;
  const chunk = chunkId ? chunks.get(chunkId) || null : null;
  $('main').classList.add('split');
  $('preview').hidden = false;
  renderPreview($('preview-body'), chunk, citations, source, { loadDocument });
  $('preview-body').querySelector('.gc-preview-title')?.focus({ preventScroll: true });
}

function closePreview() {
  $('preview').hidden = true;
  $('main').classList.remove('split');
  previewOpener?.focus();
  previewOpener = null;
}

function showTraceLink(traceId) {
  const link = $('trace-link');
  if (typeof traceId !== 'string' || !traceId) {
    link.hidden = true;
    return;
  }
  link.querySelector('a').href = `/traces/${encodeURIComponent(traceId)}`;
  link.hidden = false;
}

function reset() {
  closePreview();
  $('answer').replaceChildren();
  $('trace-link').hidden = true;
}

function showError(e) {
  status('');
  const p = document.createElement('p');
  p.className = 'gc-error';
  p.setAttribute('role', 'alert');
  p.textContent = e instanceof ApiError ? `${e.code}: ${e.message}` : `Error: ${e.message}`;
  $('answer').replaceChildren(p);
}

/** The chunks of a stored trace, for the preview of an asked answer. */
async function loadTraceChunks(traceId) {
  try {
    const trace = await (await api(`/v1/traces/${encodeURIComponent(traceId)}`)).json();
    chunks = chunkMap(trace.chunks);
  } catch {
    // The preview falls back to the verified quote.
  }
}

async function ask(e) {
  e.preventDefault();
  reset();
  chunks = new Map();
  const question = $('question').value;
  const stream = $('ask-stream').checked;
  $('ask-submit').disabled = true;
  status(stream ? 'Retrieving and generating…' : 'Answering…');
  try {
    const response = await api('/v1/ask', {
      method: 'POST',
      body: { question, stream },
      accept: stream ? 'text/event-stream' : 'application/json',
    });
    let contract = null;
    if (stream) {
      const r = streamRenderer($('answer'), { onOpen: openPreview });
      let claims = 0;
      let failed = false;
      await readEventStream(response, (name, data) => {
        if (name === 'claim') {
          claims += 1;
          status(`Verified ${claims} claim(s) so far…`);
          r.claim(data);
        } else if (name === 'claim_dropped') r.claimDropped(data);
        else if (name === 'done') contract = data;
        else if (name === 'error') {
          failed = true;
          r.error(data);
          status('');
        }
      });
      if (contract) r.done(contract);
      else if (!failed) {
        // The stream ended without `done` or `error` (connection lost).
        r.error({ error: { code: 'incomplete', message: 'the answer stream ended before the answer was complete; retry' } });
        status('');
      }
    } else {
      contract = await response.json();
      renderContract($('answer'), contract, { onOpen: openPreview });
    }
    if (contract) {
      status(contract.answerable === true ? 'Verified answer.' : 'No verified answer.');
      showTraceLink(contract.trace_id);
      await loadTraceChunks(contract.trace_id);
    }
  } catch (err) {
    showError(err);
  } finally {
    $('ask-submit').disabled = false;
  }
}

async function verify(e) {
  e.preventDefault();
  reset();
  let pasted;
  try {
    pasted = JSON.parse($('chunks').value);
  } catch (err) {
    showError(new Error(`the chunks are not JSON (${err.message})`));
    return;
  }
  const raw = $('raw-answer').value;
  let answer = null;
  try {
    answer = JSON.parse(raw);
  } catch {
    answer = null; // prose with markers
  }
  const question = $('verify-question').value.trim() || undefined;
  const isStructured = answer !== null && typeof answer === 'object' && !Array.isArray(answer);
  const [path, body] = isStructured
    ? ['/v1/verify', { chunks: pasted, answer, question }]
    : ['/v1/parse', { chunks: pasted, text: raw, question }];
  $('verify-submit').disabled = true;
  status('Verifying…');
  try {
    const contract = await (await api(path, { method: 'POST', body })).json();
    chunks = chunkMap(pasted);
    renderContract($('answer'), contract, { onOpen: openPreview });
    status(contract.answerable === true ? 'Verified answer.' : 'No verified answer.');
    showTraceLink(contract.trace_id);
  } catch (err) {
    showError(err);
  } finally {
    $('verify-submit').disabled = false;
  }
}

function selectTab(which) {
  for (const [tab, panel] of [['tab-ask', 'ask-form'], ['tab-verify', 'verify-form']]) {
    const on = tab === which;
    $(tab).setAttribute('aria-selected', String(on));
    $(panel).hidden = !on;
  }
}

function ready(info) {
  const hasCorpus = info && info.corpus !== null && typeof info.corpus === 'object';
  $('ask-fields').disabled = !hasCorpus;
  $('ask-unavailable').hidden = hasCorpus;
  $('ask-form').classList.toggle('unavailable', !hasCorpus);
  if (!hasCorpus) selectTab('tab-verify');
}

document.addEventListener('DOMContentLoaded', () => {
  $('ask-form').addEventListener('submit', ask);
  $('verify-form').addEventListener('submit', verify);
  $('tab-ask').addEventListener('click', () => selectTab('tab-ask'));
  $('tab-verify').addEventListener('click', () => selectTab('tab-verify'));
  $('preview-close').addEventListener('click', closePreview);
  $('preview').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') closePreview();
  });
  setupKey(ready);
});
