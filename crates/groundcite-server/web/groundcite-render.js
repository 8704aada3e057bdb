// groundcite-render.js: renders renderer contract v1 into any page.
//
// The reference implementation of the renderer contract (docs/contract.md):
//   - every claim is followed by footnote buttons [n]; hovering or focusing
//     one opens a popover with the source title, page, the verbatim source
//     text and a link only when source_url is a plain http(s) URL;
//   - clicking a footnote calls `onOpen` (the page shows the chunk with the
//     verified span highlighted: see renderPreview);
//   - an unanswerable contract shows the refusal message, never claim text;
//   - dropped claims and warnings go to a collapsible panel.
// Every contract field is treated as hostile: text goes in through
// textContent / createTextNode only, never innerHTML, and a URL becomes a
// link only if it parses as http: or https:.
//
// Spans in the contract are Unicode code point offsets; JavaScript strings
// are UTF-16, so an emoji before a span counts 1 in the contract and 2 here.
// codePointSpanToUtf16 converts.
//
// A plain ES module, no dependencies:
//   import { renderContract } from '/assets/groundcite-render.js';
//   renderContract(document.querySelector('#answer'), contract, { chunks });

let nextId = 0;
function uid(prefix) {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else node.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return node;
}

const str = (v) => (typeof v === 'string' ? v : null);
const int = (v) => (Number.isSafeInteger(v) && v >= 0 ? v : null);
const arr = (v) => (Array.isArray(v) ? v : []);
const obj = (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null);

/**
 * The URL if it is a plain http(s) URL with a host, else null. The contract
 * already nulls unsafe URLs; this check keeps a forged contract from
 * producing a `javascript:` link.
 */
export function safeHttpUrl(url) {
  if (typeof url !== 'string' || /[\s\u0000-\u001f]/.test(url)) return null;
  if (!/^https?:\/\/[^\s/?#@]+/i.test(url)) return null;
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (!parsed.hostname || parsed.username || parsed.password) return null;
  return parsed.href;
}

/**
 * UTF-16 offset of code point offset `cp` in `text`, or null when `cp` is
 * past the end.
 */
export function codePointToUtf16(text, cp) {
  if (!Number.isSafeInteger(cp) || cp < 0) return null;
  let units = 0;
  let points = 0;
  while (points < cp) {
    if (units >= text.length) return null;
    const c = text.codePointAt(units);
    units += c > 0xffff ? 2 : 1;
    points += 1;
  }
  return units;
}

/**
 * The contract span `{start, end}` (code points, end exclusive) as UTF-16
 * offsets into `text`, or null when it does not fit the text.
 */
export function codePointSpanToUtf16(text, span) {
  const s = obj(span);
  if (typeof text !== 'string' || !s) return null;
  const start = codePointToUtf16(text, s.start);
  const end = codePointToUtf16(text, s.end);
  if (start === null || end === null || end < start) return null;
  return { start, end };
}

/** The contract's sources by ref. */
function sourcesByRef(contract) {
  const map = new Map();
  for (const s of arr(contract.sources)) {
    const src = obj(s);
    if (src && int(src.ref) !== null) map.set(src.ref, src);
  }
  return map;
}

/** `chunks` (array, Map or object keyed by chunk_id) as a Map chunk_id → chunk. */
export function chunkMap(chunks) {
  if (chunks instanceof Map) return chunks;
  const map = new Map();
  if (Array.isArray(chunks)) {
    for (const c of chunks) {
      const chunk = obj(c);
      if (chunk && typeof chunk.chunk_id === 'string') map.set(chunk.chunk_id, chunk);
    }
  } else if (obj(chunks)) {
    for (const [k, v] of Object.entries(chunks)) if (obj(v)) map.set(k, v);
  }
  return map;
}

function sourceLabel(source, ref) {
  const title = source ? str(source.source_title) : null;
  return title || (source ? str(source.chunk_id) : null) || `source ${ref}`;
}

/** The popover body: title, page, verbatim source text, a link if safe. */
function popoverContent(ref, citations, source) {
  const parts = [];
  parts.push(el('p', { class: 'gc-pop-title' }, `[${ref}] `, sourceLabel(source, ref)));
  const meta = [];
  const page = source ? int(source.page_number) : null;
  if (page !== null) meta.push(`page ${page}`);
  const chunkId = str(citations[0]?.chunk_id) || (source ? str(source.chunk_id) : null);
  if (chunkId) meta.push(chunkId);
  if (meta.length) parts.push(el('p', { class: 'gc-pop-meta' }, meta.join(' · ')));
  for (const c of citations) {
    const text = str(c.source_text);
    if (text !== null) {
      // A quoted table row under its table's column names (the contract's
      // optional citations[].table_header, found in the same chunk).
      const columns = obj(c.table_header) ? str(c.table_header.source_text) : null;
      if (columns !== null) parts.push(el('p', { class: 'gc-pop-columns' }, 'columns: ', el('code', null, columns)));
      parts.push(el('blockquote', { class: 'gc-pop-quote' }, text));
      const match = str(c.match);
      if (match) parts.push(el('p', { class: 'gc-pop-match' }, `${match} match`));
    } else {
      parts.push(el('p', { class: 'gc-pop-meta' }, 'cited by marker only (no quote to check)'));
    }
  }
  const href = source ? safeHttpUrl(source.source_url) : null;
  if (href) {
    parts.push(
      el('p', null, el('a', { href, target: '_blank', rel: 'noopener noreferrer nofollow', class: 'gc-pop-link' }, 'Open source')),
    );
  }
  return parts;
}

/**
 * A footnote marker button with its popover. `citations` are the claim's
 * citations of this ref; `source` the contract's source (or null while
 * streaming, before `done`).
 */
function marker(ref, citations, source, claimIndex, onOpen) {
  const popId = uid('gc-pop');
  const wrap = el('span', { class: 'gc-ref' });
  const button = el(
    'button',
    {
      type: 'button',
      class: 'gc-marker',
      'data-ref': ref,
      'data-claim-index': claimIndex,
      'aria-expanded': 'false',
      'aria-controls': popId,
      'aria-label': `Source ${ref}: ${sourceLabel(source, ref)}`,
    },
    `[${ref}]`,
  );
  const pop = el('span', { class: 'gc-popover', id: popId, role: 'dialog', 'aria-label': `Source ${ref}`, hidden: true });
  // Block content inside a span keeps the popover in the marker's inline
  // flow (and right after it in tab order); CSS makes it a box.
  for (const p of popoverContent(ref, citations, source)) pop.append(p);
  wrap.append(button, pop);

  let hideTimer = null;
  const open = () => {
    clearTimeout(hideTimer);
    for (const other of document.querySelectorAll('.gc-popover:not([hidden])')) {
      if (other !== pop) closePopover(other);
    }
    pop.hidden = false;
    // Keep the box on screen (phone width): shift it left when it would
    // overflow the right edge.
    pop.style.left = '0px';
    const r = pop.getBoundingClientRect();
    const maxRight = document.documentElement.clientWidth - 8;
    if (r.right > maxRight) pop.style.left = `${Math.max(maxRight - r.right, 8 - r.left)}px`;
    button.setAttribute('aria-expanded', 'true');
    button.setAttribute('aria-describedby', popId);
  };
  const close = () => closePopover(pop);
  const closeSoon = () => {
    clearTimeout(hideTimer);
    hideTimer = setTimeout(close, 250);
  };
  // Set while Escape hands focus back to the marker, so that focus does
  // not reopen the popover it just closed.
  let ignoreFocus = false;
  button.addEventListener('mouseenter', open);
  button.addEventListener('focus', () => {
    if (ignoreFocus) ignoreFocus = false;
    else open();
  });
  button.addEventListener('mouseleave', closeSoon);
  pop.addEventListener('mouseenter', () => clearTimeout(hideTimer));
  pop.addEventListener('mouseleave', closeSoon);
  wrap.addEventListener('focusout', (e) => {
    if (!wrap.contains(e.relatedTarget)) close();
  });
  wrap.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !pop.hidden) {
      e.preventDefault();
      e.stopPropagation();
      close();
      if (document.activeElement !== button) {
        ignoreFocus = true;
        button.focus();
      }
    }
  });
  button.addEventListener('click', () => {
    if (onOpen) onOpen({ ref, citations, source, claimIndex, button });
  });
  return wrap;
}

function closePopover(pop) {
  pop.hidden = true;
  const button = pop.parentElement?.querySelector('.gc-marker');
  if (button) {
    button.setAttribute('aria-expanded', 'false');
    button.removeAttribute('aria-describedby');
  }
}

/** Citations of one claim grouped by ref, in order of first citation. */
function groupByRef(citations) {
  const groups = new Map();
  for (const c of arr(citations)) {
    const cit = obj(c);
    if (!cit || int(cit.ref) === null) continue;
    if (!groups.has(cit.ref)) groups.set(cit.ref, []);
    groups.get(cit.ref).push(cit);
  }
  return groups;
}

/** One claim: its text, then a marker per cited source. */
export function renderClaim(claim, sources, onOpen) {
  const c = obj(claim) || {};
  const index = int(c.index);
  const node = el('span', { class: 'gc-claim', 'data-claim-index': index });
  node.append(el('span', { class: 'gc-claim-text' }, str(c.text) || ''));
  for (const [ref, cits] of groupByRef(c.citations)) {
    node.append(' ', marker(ref, cits, sources.get(ref) || null, index, onOpen));
  }
  return node;
}

/** The refusal block of an unanswerable contract. */
function renderRefusal(contract) {
  const r = obj(contract.refusal);
  const message = (r && str(r.message)) || 'No answer could be shown.';
  const code = r && str(r.code);
  return el('div', { class: 'gc-refusal', role: 'status' }, el('p', null, message), code ? el('p', { class: 'gc-refusal-code' }, `Refusal ${code}${r && str(r.reason) ? ` · ${r.reason}` : ''}`) : null);
}

/** The warnings panel (dropped claims first); null when there are none. */
export function renderWarnings(warnings, keptIndexes) {
  const list = arr(warnings).map(obj).filter(Boolean);
  if (!list.length) return null;
  const dropped = new Map();
  for (const w of list) {
    const i = int(w.claim_index);
    if (i !== null && !keptIndexes.has(i)) {
      if (!dropped.has(i)) dropped.set(i, []);
      dropped.get(i).push(w);
    }
  }
  const details = el('details', { class: 'gc-warnings' });
  details.append(el('summary', null, `Dropped claims (${dropped.size}) and warnings (${list.length})`));
  if (dropped.size) {
    const ul = el('ul', { class: 'gc-dropped' });
    for (const [i, ws] of [...dropped.entries()].sort((a, b) => a[0] - b[0])) {
      ul.append(el('li', { 'data-claim-index': i }, `Claim ${i} was dropped: `, ws.map((w) => str(w.code) || 'warning').join(', ')));
    }
    details.append(ul);
  }
  const ul = el('ul', { class: 'gc-warning-list' });
  for (const w of list) {
    ul.append(el('li', null, el('code', null, str(w.code) || 'warning'), ': ', str(w.message) || ''));
  }
  details.append(ul);
  return details;
}

/**
 * Renders `contract` into `container` (replacing its content).
 *
 * options.onOpen({ref, citations, source, claimIndex, button}): called when
 *   a footnote is clicked (e.g. to open a preview with renderPreview).
 * Returns the root element.
 */
export function renderContract(container, contract, options = {}) {
  const c = obj(contract);
  const root = el('div', { class: 'gc-answer' });
  if (!c) {
    root.append(el('p', { class: 'gc-error' }, 'Not a renderer contract.'));
    container.replaceChildren(root);
    return root;
  }
  const sources = sourcesByRef(c);
  const kept = new Set();
  if (c.answerable === true && arr(c.claims).length) {
    const body = el('p', { class: 'gc-claims' });
    let first = true;
    for (const claim of arr(c.claims)) {
      if (!obj(claim)) continue;
      if (!first) body.append(' ');
      first = false;
      body.append(renderClaim(claim, sources, options.onOpen));
      if (int(claim.index) !== null) kept.add(claim.index);
    }
    root.append(body);
    root.append(renderSources(sources));
  } else {
    // Unanswerable (or answerable without claims): only the refusal, even
    // if a forged contract carries claims.
    root.append(renderRefusal(c));
  }
  const warnings = renderWarnings(c.warnings, kept);
  if (warnings) root.append(warnings);
  container.replaceChildren(root);
  return root;
}

/** The numbered list of sources under the answer. */
function renderSources(sources) {
  const ol = el('ol', { class: 'gc-sources', 'aria-label': 'Sources' });
  for (const [ref, s] of [...sources.entries()].sort((a, b) => a[0] - b[0])) {
    const li = el('li', { value: ref, 'data-ref': ref });
    const href = safeHttpUrl(s.source_url);
    const title = sourceLabel(s, ref);
    li.append(href ? el('a', { href, target: '_blank', rel: 'noopener noreferrer nofollow' }, title) : el('span', null, title));
    const page = int(s.page_number);
    li.append(el('span', { class: 'gc-source-meta' }, ` (${str(s.chunk_id) || ''}${page !== null ? `, p. ${page}` : ''})`));
    ol.append(li);
  }
  return ol;
}

/** Rectangles drawn per page at most (a hostile contract cannot flood it). */
export const MAX_RECTS = 256;

function finite(x) {
  return typeof x === 'number' && Number.isFinite(x);
}

/**
 * The located citations' rectangles on one page: `{page, rects}` for the
 * first citation with a usable `location`, with the rectangles of every
 * citation located on that same page; null when none is usable. Bad
 * entries (not four finite numbers, a page that is not a positive
 * integer) are skipped, never guessed.
 */
export function pageHighlights(citations) {
  let page = null;
  const rects = [];
  for (const c of Array.isArray(citations) ? citations : []) {
    const loc = c && typeof c === 'object' ? c.location : null;
    if (!loc || typeof loc !== 'object' || !Number.isInteger(loc.page_number) || loc.page_number < 1) continue;
    if (page === null) page = loc.page_number;
    if (loc.page_number !== page || !Array.isArray(loc.rects)) continue;
    for (const r of loc.rects) {
      if (rects.length >= MAX_RECTS) break;
      if (Array.isArray(r) && r.length === 4 && r.every(finite)) rects.push(r);
    }
  }
  return page === null || rects.length === 0 ? null : { page, rects };
}

/**
 * Shows `chunk.content` in `container` with the spans of `citations`
 * highlighted (`<mark>`), and scrolls the first into view. Returns the
 * marks. A span that does not fit the text, or whose text differs from the
 * citation's source_text, is not highlighted (and flagged).
 *
 * When a citation carries a `location` (a PDF page and rectangles) and
 * `options.loadDocument(chunkId)` resolves to the PDF's bytes, the page is
 * drawn above the text with the quote highlighted (pdf-page.js, loaded on
 * demand); `options.onPage` gets the page's highlights, or the error.
 */
export function renderPreview(container, chunk, citations, source, options = {}) {
  const content = chunk && typeof chunk.content === 'string' ? chunk.content : null;
  const head = el('div', { class: 'gc-preview-head' });
  head.append(el('h2', { class: 'gc-preview-title', tabindex: '-1' }, sourceLabel(source || chunk, '?')));
  const page = int(source?.page_number ?? chunk?.page_number);
  const meta = [str(chunk?.chunk_id) || str(citations[0]?.chunk_id), page !== null ? `page ${page}` : null].filter(Boolean);
  head.append(el('p', { class: 'gc-pop-meta' }, meta.join(' · ')));
  const href = safeHttpUrl(source ? source.source_url : null);
  if (href) head.append(el('p', null, el('a', { href, target: '_blank', rel: 'noopener noreferrer nofollow' }, 'Open source')));
  const body = el('div', { class: 'gc-preview-text' });
  const marks = [];
  if (content === null) {
    body.append(el('p', { class: 'gc-error' }, 'The chunk text is not available here; the verified quote is:'));
    for (const c of citations) if (str(c.source_text)) body.append(el('blockquote', null, c.source_text));
  } else {
    const ranges = [];
    const problems = [];
    for (const c of citations) {
      if (!obj(c.span)) continue;
      const r = codePointSpanToUtf16(content, c.span);
      if (!r) {
        problems.push('a span lies outside this chunk');
      } else if (str(c.source_text) !== null && content.slice(r.start, r.end) !== c.source_text) {
        problems.push('a span does not hold its quoted text in this chunk');
      } else {
        ranges.push(r);
      }
    }
    ranges.sort((a, b) => a.start - b.start);
    let at = 0;
    for (const r of ranges) {
      if (r.start < at) continue; // overlapping spans: the first wins
      body.append(content.slice(at, r.start));
      const mark = el('mark', { class: 'gc-span' }, content.slice(r.start, r.end));
      marks.push(mark);
      body.append(mark);
      at = r.end;
    }
    body.append(content.slice(at));
    if (problems.length) head.append(el('p', { class: 'gc-error', role: 'alert' }, `Not highlighted: ${problems.join('; ')}.`));
  }
  const located = typeof options.loadDocument === 'function' ? pageHighlights(citations) : null;
  if (located) {
    const chunkId = str(chunk?.chunk_id) || str(citations.find((c) => c?.location)?.chunk_id);
    const pageBox = el('div', { class: 'gc-preview-page' }, el('p', { class: 'gc-pop-meta', role: 'status' }, `Loading page ${located.page}…`));
    container.replaceChildren(head, pageBox, body);
    const title = sourceLabel(source || chunk, '?');
    Promise.resolve()
      .then(() => options.loadDocument(chunkId))
      .then((data) => import(new URL('./pdf-page.js', import.meta.url)).then((m) => m.renderPdfPage(pageBox, data, { ...located, label: `Page ${located.page} of ${title}, the cited passage highlighted` })))
      .then((hls) => {
        hls[0]?.scrollIntoView({ block: 'center' });
        options.onPage?.(hls, null);
      })
      .catch((e) => {
        pageBox.replaceChildren(el('p', { class: 'gc-error', role: 'alert' }, `The page could not be shown (${e && e.message ? e.message : e}); the text is below.`));
        options.onPage?.(null, e);
      });
  } else {
    container.replaceChildren(head, body);
  }
  if (marks[0] && !located) marks[0].scrollIntoView({ block: 'center' });
  return marks;
}

/**
 * Renders a streamed answer claim by claim. Returns handlers for the SSE
 * events of POST /v1/ask and /v1/answer: claim, claim_dropped, done, error.
 */
export function streamRenderer(container, options = {}) {
  const root = el('div', { class: 'gc-answer gc-streaming', 'aria-busy': 'true' });
  const body = el('p', { class: 'gc-claims', 'aria-live': 'polite' });
  const dropped = el('ul', { class: 'gc-dropped-live' });
  root.append(body, dropped);
  container.replaceChildren(root);
  const empty = new Map();
  return {
    claim(data) {
      const d = obj(data);
      if (!d || !obj(d.claim)) return;
      if (body.childNodes.length) body.append(' ');
      body.append(renderClaim(d.claim, empty, options.onOpen));
    },
    claimDropped(data) {
      const d = obj(data);
      if (!d) return;
      const codes = arr(d.warnings).map((w) => str(obj(w)?.code) || 'warning');
      dropped.append(el('li', { 'data-claim-index': int(d.index) }, `Claim ${int(d.index) ?? '?'} was dropped: ${codes.join(', ')}`));
    },
    done(contract) {
      return renderContract(container, contract, options);
    },
    error(err) {
      root.removeAttribute('aria-busy');
      const e = obj(obj(err)?.error) || {};
      root.append(el('p', { class: 'gc-error', role: 'alert' }, `Error ${str(e.code) || ''}: ${str(e.message) || 'the answer failed'}`));
    },
  };
}

/**
 * Reads a `text/event-stream` response body (from fetch: EventSource cannot
 * POST) and calls `onEvent(name, data)` with each event's parsed JSON.
 */
export async function readEventStream(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const dispatch = (block) => {
    let name = 'message';
    const data = [];
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') name = value;
      else if (field === 'data') data.push(value);
    }
    if (!data.length) return;
    let parsed = null;
    try {
      parsed = JSON.parse(data.join('\n'));
    } catch {
      parsed = null;
    }
    onEvent(name, parsed);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.search(/\r\n\r\n|\n\n|\r\r/)) >= 0) {
      const sep = buffer.slice(cut).match(/^(\r\n\r\n|\n\n|\r\r)/)[0];
      dispatch(buffer.slice(0, cut));
      buffer = buffer.slice(cut + sep.length);
    }
  }
  if (buffer.trim()) dispatch(buffer);
}
