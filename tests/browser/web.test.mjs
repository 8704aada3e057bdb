// The web app in headless Chromium against real `groundcite serve`
// processes (started by scripts/browser-tests, which sets GC_BASE_URL,
// GC_BARE_URL, GC_PDF_URL, GC_KEY, GC_SCREENSHOTS and CHROMIUM).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { makePdf } from './pdf.mjs';

const BASE = process.env.GC_BASE_URL;
const BARE = process.env.GC_BARE_URL;
// A service whose --docs folder holds one PDF (tests/browser/pdf.mjs's manual).
const PDF_URL = process.env.GC_PDF_URL;
const KEY = process.env.GC_KEY;
const SHOTS = process.env.GC_SCREENSHOTS || '';
assert.ok(BASE && BARE && PDF_URL && KEY, 'run through scripts/browser-tests');

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
});

after(async () => {
  await browser?.close();
});

async function newPage(viewport = { width: 1280, height: 860 }) {
  const context = await browser.newContext({ viewport });
  // GC_WEB_DIR: serve the page and assets from the working tree instead of
  // the binary (for editing them without rebuilding).
  if (process.env.GC_WEB_DIR) {
    const dir = process.env.GC_WEB_DIR;
    const types = { js: 'text/javascript', mjs: 'text/javascript', css: 'text/css', html: 'text/html' };
    await context.route(/\/(assets\/[^/?#]+|traces\/[^/?#]+|)(\?.*)?$/, (route) => {
      const p = new URL(route.request().url()).pathname;
      let file = p === '/' ? 'index.html' : p.startsWith('/traces/') ? 'trace.html' : p.slice('/assets/'.length);
      if (!fs.existsSync(path.join(dir, file)) && fs.existsSync(path.join(dir, 'vendor/pdfjs', file))) file = `vendor/pdfjs/${file}`;
      if (!fs.existsSync(path.join(dir, file))) return route.continue();
      return route.fulfill({ contentType: types[file.split('.').pop()], body: fs.readFileSync(path.join(dir, file)) });
    });
  }
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.errors = errors;
  return page;
}

async function shot(page, name) {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Opens `url`, types the key into the page's key form, waits for the app. */
async function openApp(page, url = `${BASE}/`) {
  await page.goto(url);
  await page.locator('#key-form').waitFor({ state: 'visible' });
  await page.fill('#key-input', KEY);
  await page.click('#key-form button[type=submit]');
  await page.locator('#main').waitFor({ state: 'visible' });
}

// The emoji and the astral CJK ideograph before the span count 1 code point
// each in the contract and 2 UTF-16 units in JavaScript.
const FILLER = Array.from({ length: 60 }, (_, i) => `Line ${i} of the general terms, kept here to push the quote far down.`).join('\n');
const QUOTE = 'Refunds are available within 30 days of purchase.';
const REFUND_CONTENT = `🎉🚀 Party 𠮷 time! ${FILLER}\n🦄 ${QUOTE} Opened software can't be refunded.`;
const CHUNKS = [
  { chunk_id: 'help/refunds.md#chunk-1', content: REFUND_CONTENT, source_title: 'Refund policy', source_url: 'https://help.example.com/refunds', page_number: 4 },
  { chunk_id: 'help/shipping.md#chunk-3', content: 'Standard shipping takes 3 to 5 business days.', source_title: 'Shipping', source_url: null, page_number: null },
];
const ANSWER = {
  answerable: true,
  claims: [
    { text: 'You can get a refund within 30 days of purchase.', citations: [{ chunk_id: 'help/refunds.md#chunk-1', quote: QUOTE }] },
    { text: 'Standard shipping takes 3 to 5 business days.', citations: [{ chunk_id: 'help/shipping.md#chunk-3', quote: 'Standard shipping takes 3 to 5 business days.' }] },
    { text: 'Refunds arrive within an hour.', citations: [{ chunk_id: 'help/faq.md#chunk-9', quote: 'within an hour' }] },
  ],
};

async function verifyPasted(page, chunks, answer, question) {
  await page.click('#tab-verify');
  await page.fill('#chunks', JSON.stringify(chunks));
  await page.fill('#raw-answer', typeof answer === 'string' ? answer : JSON.stringify(answer));
  if (question) await page.fill('#verify-question', question);
  await page.click('#verify-submit');
  await page.locator('#answer .gc-answer').waitFor();
}

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
const HOSTILE_CHUNKS = [
  { chunk_id: 'evil#1', content: `Prelude ${HOSTILE} Refunds take <b>5</b> days. <a href="javascript:window.__pwned=3">x</a>`, source_title: `Evil ${HOSTILE}`, source_url: 'javascript:window.__pwned=4', page_number: 1 },
];
const HOSTILE_ANSWER = {
  answerable: true,
  claims: [{ text: `Refunds take 5 days ${HOSTILE}`, citations: [{ chunk_id: 'evil#1', quote: `${HOSTILE} Refunds take <b>5</b> days.` }] }],
};

/** Fails if any script ran or any javascript: link exists. */
async function assertInert(page) {
  const state = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    badLinks: [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')).filter((h) => !/^(https?:|\/)/i.test(h.trim())),
    scripts: [...document.querySelectorAll('script')].filter((s) => !/\/assets\/|^$/.test(s.getAttribute('src') ?? '')).length + document.querySelectorAll('#answer script, #answer img, #preview-body script, #preview-body img').length,
  }));
  assert.equal(state.pwned, null, 'an injected script ran');
  assert.deepEqual(state.badLinks, [], 'a non-http(s) link exists');
  assert.equal(state.scripts, 0, 'injected elements exist');
}

describe('the answer renderer', () => {
  test('footnote → popover → preview highlights exactly the verified span (astral characters before it)', async () => {
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, CHUNKS, ANSWER, 'Can I get a refund?');
    const claims = page.locator('#answer .gc-claim');
    assert.equal(await claims.count(), 2);
    assert.match(await claims.nth(0).textContent(), /refund within 30 days/);
    // The made-up claim is gone from the answer, listed as dropped.
    assert.doesNotMatch(await page.locator('#answer .gc-claims').textContent(), /within an hour/);
    const panel = page.locator('#answer details.gc-warnings');
    await panel.locator('summary').click();
    assert.match(await panel.textContent(), /Claim 2 was dropped/);
    assert.match(await panel.textContent(), /unknown_chunk_id/);

    const marker = page.locator('#answer .gc-marker[data-ref="1"]').first();
    await marker.hover();
    const pop = page.locator('#answer .gc-popover:not([hidden])');
    await pop.waitFor();
    const popText = await pop.textContent();
    assert.match(popText, /Refund policy/);
    assert.match(popText, /page 4/);
    assert.ok(popText.includes(QUOTE), 'the popover shows the verbatim source text');
    assert.equal(await pop.locator('a').getAttribute('href'), 'https://help.example.com/refunds');
    await shot(page, 'answer-popover');

    await marker.click();
    const mark = page.locator('#preview-body mark.gc-span');
    await mark.waitFor();
    assert.equal(await mark.count(), 1);
    assert.equal(await mark.textContent(), QUOTE);
    // Exactly the span: the text before the mark is the chunk up to it.
    const before = await page.evaluate(() => {
      const m = document.querySelector('#preview-body mark.gc-span');
      const r = document.createRange();
      r.setStart(m.parentElement, 0);
      r.setEndBefore(m);
      return r.toString();
    });
    assert.equal(before, REFUND_CONTENT.slice(0, REFUND_CONTENT.indexOf(QUOTE)));
    // Scrolled into view inside the preview.
    const visible = await page.evaluate(() => {
      const m = document.querySelector('#preview-body mark.gc-span').getBoundingClientRect();
      const box = document.querySelector('#preview-body').getBoundingClientRect();
      return m.top >= box.top && m.bottom <= box.bottom && m.top < window.innerHeight;
    });
    assert.ok(visible, 'the highlighted span is scrolled into view');
    assert.equal(await page.locator('#main').getAttribute('class'), 'layout split');
    await shot(page, 'answer-preview');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('the module converts code point spans to UTF-16', async () => {
    const page = await newPage();
    await page.goto(`${BASE}/`);
    const r = await page.evaluate(async () => {
      const m = await import('/assets/groundcite-render.js');
      return {
        emoji: m.codePointSpanToUtf16('a😀bc', { start: 2, end: 4 }),
        past: m.codePointSpanToUtf16('ab', { start: 1, end: 3 }),
        urls: ['javascript:alert(1)', ' JaVaScRiPt:alert(1)', 'data:text/html,x', '//evil.example', 'https://u:p@x.example', 'http://ok.example/a?b#c'].map(m.safeHttpUrl),
      };
    });
    assert.deepEqual(r.emoji, { start: 3, end: 5 });
    assert.equal(r.past, null);
    assert.deepEqual(r.urls, [null, null, null, null, null, 'http://ok.example/a?b#c']);
    await page.context().close();
  });

  test('a null URL renders no link', async () => {
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, CHUNKS, ANSWER);
    const marker = page.locator('#answer .gc-marker[data-ref="2"]');
    await marker.hover();
    const pop = page.locator('#answer .gc-popover:not([hidden])');
    await pop.waitFor();
    assert.match(await pop.textContent(), /Shipping/);
    assert.equal(await pop.locator('a').count(), 0);
    assert.equal(await page.locator('#answer .gc-sources li[data-ref="2"] a').count(), 0);
    assert.equal(await page.locator('#answer .gc-sources li[data-ref="1"] a').count(), 1);
    await marker.click();
    await page.locator('#preview-body mark.gc-span').waitFor();
    assert.equal(await page.locator('#preview-body a').count(), 0);
    await page.context().close();
  });

  test('a quoted table row shows its column names above it; other quotes show none', async () => {
    const header = `| Code | Meaning ${HOSTILE} |`;
    const row = '| RM-4221 | The API key was revoked. |';
    const chunks = [
      { chunk_id: 'api/errors.md#chunk-2', content: `Error codes:\n\n${header}\n|---|---|\n${row}\n`, source_title: 'Error codes', source_url: null, page_number: null },
      CHUNKS[1],
    ];
    const answer = {
      answerable: true,
      claims: [
        { text: 'RM-4221 means the API key was revoked.', citations: [{ chunk_id: 'api/errors.md#chunk-2', quote: row }] },
        ANSWER.claims[1],
      ],
    };
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, chunks, answer);
    await page.locator('#answer .gc-marker[data-ref="1"]').first().hover();
    const pop = page.locator('#answer .gc-popover:not([hidden])');
    await pop.waitFor();
    const columns = pop.locator('.gc-pop-columns');
    assert.equal(await columns.count(), 1);
    assert.equal(await columns.locator('code').textContent(), header, 'the header row, verbatim and as text');
    // Above the quoted row, in reading order.
    const order = await pop.evaluate((p) => [...p.children].map((c) => c.className));
    assert.ok(order.indexOf('gc-pop-columns') + 1 === order.indexOf('gc-pop-quote'), order.join(' '));
    await shot(page, 'table-row-popover');
    // The other source's quote is no table row: every popover is built up
    // front, and only the row's has column names.
    assert.equal(await page.locator('#answer .gc-popover .gc-pop-columns').count(), 1);
    await assertInert(page);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('HTML and script in titles, quotes and chunk text, and a javascript: URL, are inert (real service)', async () => {
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, HOSTILE_CHUNKS, HOSTILE_ANSWER);
    const marker = page.locator('#answer .gc-marker').first();
    await marker.hover();
    const pop = page.locator('#answer .gc-popover:not([hidden])');
    await pop.waitFor();
    assert.ok((await pop.textContent()).includes(HOSTILE), 'the title and quote are shown as text');
    assert.equal(await pop.locator('a').count(), 0, 'the javascript: URL became no link');
    await marker.click();
    const mark = page.locator('#preview-body mark.gc-span');
    await mark.waitFor();
    assert.equal(await mark.textContent(), `${HOSTILE} Refunds take <b>5</b> days.`);
    await page.locator('#answer details.gc-warnings summary').click();
    assert.match(await page.locator('#answer details.gc-warnings').textContent(), /unsafe_source_url/);
    await page.waitForTimeout(200);
    await assertInert(page);
    await shot(page, 'hostile');
    await page.context().close();
  });

  test('a forged contract (javascript: URLs, HTML everywhere) renders inert, without CSP to help', async () => {
    const page = await newPage();
    // A same-origin page of the test's own, without the service's CSP: the
    // renderer alone must keep the content inert.
    await page.route(`${BASE}/__harness`, (route) => route.fulfill({
      contentType: 'text/html',
      body: '<!doctype html><body><div id="answer"></div><div id="preview-body"></div><script type="module">import * as gc from "/assets/groundcite-render.js"; window.gc = gc; window.ready = true;</script></body>',
    }));
    await page.goto(`${BASE}/__harness`);
    await page.waitForFunction(() => window.ready === true);
    const evil = HOSTILE;
    await page.evaluate((evil) => {
      const contract = {
        contract_version: '1', trace_id: 't', question: evil, answerable: true, answer: evil, refusal: null,
        claims: [{ index: 0, text: `Claim ${evil}`, quantities: [], citations: [
          { ref: 1, chunk_id: `c${evil}`, quote: evil, source_text: evil, match: 'exact', span: { start: 0, end: 5 } },
          { ref: 2, chunk_id: 'c2', quote: 'x', source_text: 'x', match: 'exact', span: { start: 0, end: 1 } }] }],
        sources: [
          { ref: 1, chunk_id: `c${evil}`, source_title: evil, source_url: 'javascript:window.__pwned=5', page_number: 2, score: null },
          { ref: 2, chunk_id: 'c2', source_title: 'T', source_url: ' jAvAsCrIpT:window.__pwned=6', page_number: null, score: null }],
        warnings: [{ code: evil, claim_index: 3, citation_index: null, chunk_id: null, message: evil }],
        match_profile: 'default', model: evil, created_at: '2026-01-01T00:00:00Z',
      };
      window.gc.renderContract(document.getElementById('answer'), contract, {
        onOpen: ({ citations, source }) => window.gc.renderPreview(document.getElementById('preview-body'), { chunk_id: 'c', content: evil }, citations, source),
      });
      for (const b of document.querySelectorAll('.gc-marker')) { b.focus(); b.click(); }
      document.querySelector('details')?.setAttribute('open', '');
    }, evil);
    await page.waitForTimeout(200);
    await assertInert(page);
    assert.ok((await page.locator('#answer').textContent()).includes(evil));
    await page.context().close();
  });

  test('an unanswerable result shows the refusal, never claim text', async () => {
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, CHUNKS, { answerable: false, claims: [{ text: 'SECRET CLAIM TEXT', citations: [{ chunk_id: 'help/shipping.md#chunk-3', quote: 'Standard shipping' }] }] });
    const answer = page.locator('#answer');
    await answer.locator('.gc-refusal').waitFor();
    assert.match(await answer.locator('.gc-refusal').textContent(), /couldn't find the answer/);
    assert.match(await answer.locator('.gc-refusal').textContent(), /R1/);
    assert.doesNotMatch(await answer.textContent(), /SECRET CLAIM TEXT/);
    assert.equal(await answer.locator('.gc-claim').count(), 0);
    await page.context().close();
  });
});

describe('streaming', () => {
  test('/v1/ask streams claims from the real service (embedded model, corpus/sample), rendered in order', async () => {
    const page = await newPage();
    await openApp(page);
    assert.equal(await page.locator('#ask-submit').isDisabled(), false);
    // Records what the page shows, in order: streamed claims, then the final render.
    await page.evaluate(() => {
      window.seen = [];
      new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) {
            if (!(n instanceof Element)) continue;
            if (n.matches('.gc-claim') && n.closest('.gc-streaming')) window.seen.push(`claim:${n.dataset.claimIndex}`);
            if (n.matches('.gc-answer:not(.gc-streaming)')) window.seen.push('final');
          }
        }
      }).observe(document.getElementById('answer'), { childList: true, subtree: true });
    });
    await page.fill('#question', 'How long does standard shipping take?');
    assert.equal(await page.locator('#ask-stream').isChecked(), true);
    await page.click('#ask-submit');
    // The debug build's embedded model on a busy CI machine: minutes, not seconds.
    await page.locator('#trace-link:not([hidden])').waitFor({ timeout: 400_000 });
    const seen = await page.evaluate(() => window.seen);
    const streamed = seen.filter((s) => s.startsWith('claim:')).map((s) => Number(s.slice(6)));
    assert.ok(streamed.length >= 1, `claims were streamed before the final contract: ${seen}`);
    assert.equal(seen.indexOf('final'), streamed.length, `the final render came after the streamed claims: ${seen}`);
    assert.deepEqual(streamed, [...streamed].sort((a, b) => a - b));
    const finalClaims = page.locator('#answer .gc-claim');
    assert.ok((await finalClaims.count()) >= 1);
    assert.match(await page.locator('#answer .gc-claims').textContent(), /business days/);
    // The preview of an asked answer shows the retrieved chunk (from the trace).
    await page.waitForFunction(() => document.getElementById('ask-submit').disabled === false);
    await page.locator('#answer .gc-marker').first().click();
    await page.locator('#preview-body mark.gc-span').waitFor();
    assert.ok((await page.locator('#preview-body .gc-preview-text').textContent()).length > (await page.locator('#preview-body mark.gc-span').textContent()).length);
    await shot(page, 'ask-streamed');
    // The README's picture: the answer, its popover and the preview. The
    // pointer first leaves the marker it just clicked (the preview took the
    // focus and closed its popover): a short answer does not reflow away
    // from under it, and hovering where the pointer already is fires no
    // mouseenter.
    await page.mouse.move(0, 0);
    await page.locator('#answer .gc-marker').first().hover();
    await page.locator('#answer .gc-popover:not([hidden])').waitFor();
    await shot(page, 'answer');
    await page.mouse.move(0, 0);
    await page.locator('#answer .gc-popover:not([hidden])').waitFor({ state: 'detached' });

    // The trace of this answer: raw output beside the verified contract.
    await page.click('#trace-link a');
    await page.waitForURL(/\/traces\//);
    await page.locator('#main').waitFor({ state: 'visible' }); // the key is still in this tab's sessionStorage
    await page.locator('#contract .gc-answer').waitFor();
    assert.match(await page.locator('#question').textContent(), /standard shipping/);
    const raw = await page.locator('#raw-output').textContent();
    assert.match(raw, /"answerable"\s*:\s*true/);
    assert.match(await page.locator('#timings').textContent(), /retrieve_ms/);
    assert.ok((await page.locator('#chunks li').count()) >= 1);
    await page.click('#reverify');
    await page.locator('#reverify-result[data-same]').waitFor();
    assert.equal(await page.locator('#reverify-result').getAttribute('data-same'), 'true');
    await shot(page, 'trace-ask');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('an SSE stream renders claim by claim, dropped claims listed, then the contract (scripted stream)', async () => {
    const page = await newPage();
    await openApp(page);
    const claim = (index, text, ref) => ({ index, text, quantities: [], citations: [{ ref, chunk_id: `c${ref}`, quote: text, source_text: text, match: 'exact', span: { start: 0, end: [...text].length } }] });
    const c0 = claim(0, 'First claim.', 1);
    const c2 = claim(2, 'Third claim.', 2);
    const contract = {
      contract_version: '1', trace_id: 'scripted-1', question: 'q', answerable: true, answer: 'First claim. [1] Third claim. [2]', refusal: null,
      claims: [c0, c2],
      sources: [{ ref: 1, chunk_id: 'c1', source_title: 'One', source_url: null, page_number: null, score: null }, { ref: 2, chunk_id: 'c2', source_title: 'Two', source_url: null, page_number: null, score: null }],
      warnings: [{ code: 'quote_not_found', claim_index: 1, citation_index: 0, chunk_id: 'c1', message: 'not there' }, { code: 'claim_unsupported', claim_index: 1, citation_index: null, chunk_id: null, message: 'dropped' }],
      match_profile: 'default', model: null, created_at: '2026-01-01T00:00:00Z',
    };
    const sse = [
      ['claim', { index: 0, claim: c0 }],
      ['claim_dropped', { index: 1, warnings: contract.warnings }],
      ['claim', { index: 2, claim: c2 }],
      ['done', contract],
    ].map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('');
    await page.route(`${BASE}/v1/ask`, (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body: sse }));
    await page.route(`${BASE}/v1/traces/scripted-1`, (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{"error":{"code":"not_found","message":"no"}}' }));
    await page.evaluate(() => {
      window.seen = [];
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes) {
          if (n instanceof Element && n.matches('.gc-claim, .gc-dropped-live li')) window.seen.push(`${n.closest('.gc-streaming') ? 's' : 'f'}${n.dataset.claimIndex}`);
        }
      }).observe(document.getElementById('answer'), { childList: true, subtree: true });
    });
    await page.fill('#question', 'q');
    await page.click('#ask-submit');
    await page.locator('#trace-link:not([hidden])').waitFor();
    const seen = await page.evaluate(() => window.seen);
    assert.deepEqual(seen.slice(0, 3), ['s0', 's1', 's2']);
    const texts = await page.locator('#answer .gc-claim .gc-claim-text').allTextContents();
    assert.deepEqual(texts, ['First claim.', 'Third claim.']);
    await page.locator('#answer details.gc-warnings summary').click();
    assert.match(await page.locator('#answer details.gc-warnings').textContent(), /Claim 1 was dropped/);
    await page.context().close();
  });
});

describe('trace viewer', () => {
  test('shows the raw output beside the verified contract, and re-verifies', async () => {
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, CHUNKS, ANSWER, 'Can I get a refund?');
    await page.click('#trace-link a');
    await page.waitForURL(/\/traces\//);
    await page.locator('#contract .gc-answer').waitFor();
    const raw = await page.locator('#raw-output').textContent();
    assert.ok(raw.includes('Refunds arrive within an hour.'), 'the raw output keeps the dropped claim');
    const verified = await page.locator('#contract .gc-claims').textContent();
    assert.ok(!verified.includes('within an hour'), 'the verified contract does not');
    assert.match(await page.locator('#warnings').textContent(), /unknown_chunk_id/);
    assert.match(await page.locator('#chunks').textContent(), /Party/);
    await page.click('#reverify');
    await page.locator('#reverify-result[data-same]').waitFor();
    assert.equal(await page.locator('#reverify-result').getAttribute('data-same'), 'true');
    assert.match(await page.locator('#reverify-result').textContent(), /Same/);
    // Footnotes work here too, with the trace's chunks.
    await page.locator('#contract .gc-marker[data-ref="1"]').click();
    assert.equal(await page.locator('#preview-body mark.gc-span').textContent(), QUOTE);
    await shot(page, 'trace');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('the shell is public, the data is not: no key, no trace', async () => {
    const page = await newPage();
    await page.goto(`${BASE}/traces/does-not-matter`);
    await page.locator('#key-form').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#main').isVisible(), false);
    assert.match(await page.locator('#key-message').textContent(), /needs an API key/);
    await page.fill('#key-input', 'wrong-key');
    await page.click('#key-form button[type=submit]');
    await page.locator('#key-message', { hasText: 'not accepted' }).waitFor();
    assert.ok(!page.url().includes('wrong-key'));
    await page.context().close();
  });
});

describe('access', () => {
  test('keyboard: Tab to a marker opens its popover, Escape closes it, Enter opens the preview', async () => {
    const page = await newPage();
    await openApp(page);
    await verifyPasted(page, CHUNKS, ANSWER);
    await page.focus('#verify-submit');
    let onMarker = false;
    for (let i = 0; i < 20 && !onMarker; i += 1) {
      await page.keyboard.press('Tab');
      onMarker = await page.evaluate(() => document.activeElement?.classList.contains('gc-marker'));
    }
    assert.ok(onMarker, 'a marker is reachable with Tab');
    const marker = page.locator('.gc-marker:focus');
    assert.equal(await marker.getAttribute('aria-expanded'), 'true');
    const popId = await marker.getAttribute('aria-controls');
    assert.equal(await marker.getAttribute('aria-describedby'), popId);
    assert.equal(await page.locator(`[id="${popId}"]`).isVisible(), true);
    assert.match(await marker.getAttribute('aria-label'), /^Source 1: Refund policy$/);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator(`[id="${popId}"]`).isVisible(), false);
    assert.equal(await marker.getAttribute('aria-expanded'), 'false');
    assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('gc-marker')), 'focus stays on the marker');
    await page.keyboard.press('Enter');
    await page.locator('#preview-body mark.gc-span').waitFor();
    assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('gc-preview-title')), 'focus moves to the preview');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#preview').isVisible(), false);
    assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('gc-marker')), 'focus returns to the marker');
    await page.context().close();
  });

  test('phone width: no horizontal scrolling, the preview stacks under the answer', async () => {
    const page = await newPage({ width: 375, height: 740 });
    await openApp(page);
    await verifyPasted(page, CHUNKS, ANSWER);
    await page.locator('#answer .gc-marker').first().click();
    await page.locator('#preview-body mark.gc-span').waitFor();
    const layout = await page.evaluate(() => {
      const work = document.querySelector('.work').getBoundingClientRect();
      const preview = document.getElementById('preview').getBoundingClientRect();
      return { scrollWidth: document.documentElement.scrollWidth, stacked: preview.top >= work.bottom - 1, previewWidth: preview.width };
    });
    assert.ok(layout.scrollWidth <= 375, `page is ${layout.scrollWidth}px wide`);
    assert.ok(layout.stacked, 'the preview is below the answer');
    assert.ok(layout.previewWidth <= 375);
    await shot(page, 'phone-preview');
    await page.locator('#answer .gc-marker').first().scrollIntoViewIfNeeded();
    await page.locator('#answer .gc-marker').first().hover();
    const pop = await page.locator('#answer .gc-popover:not([hidden])').boundingBox();
    assert.ok(pop && pop.x >= 0 && pop.x + pop.width <= 375, 'the popover fits the screen');
    await shot(page, 'phone-popover');
    await page.context().close();
  });

  test('without a corpus, the Ask form is greyed out with an explanation', async () => {
    const page = await newPage();
    await openApp(page, `${BARE}/`);
    assert.equal(await page.locator('#question').isDisabled(), true);
    assert.equal(await page.locator('#ask-submit').isDisabled(), true);
    await page.click('#tab-ask');
    assert.match(await page.locator('#ask-unavailable').textContent(), /no document corpus/);
    await shot(page, 'no-corpus');
    await page.context().close();
  });
});

// The quote's two lines, as the server's extraction gives them: PDF points,
// unrotated page, origin bottom left (generous boxes around each line).
const PDF_RECTS = [[70, 694, 340, 718], [70, 654, 260, 678]];

/**
 * Installs `window.gcInk(canvas, x, y, w, h)` in the page: the number of
 * dark pixels of a canvas under a box in CSS pixels (-1 when the box leaves
 * the canvas).
 */
async function installInk(page) {
  await page.evaluate(() => {
    window.gcInk = (canvas, x, y, w, h) => {
      const sx = canvas.width / canvas.clientWidth;
      const X = Math.max(0, Math.round(x * sx)), Y = Math.max(0, Math.round(y * sx));
      const W = Math.max(1, Math.round(w * sx)), H = Math.max(1, Math.round(h * sx));
      if (Y + H > canvas.height || X + W > canvas.width) return -1;
      const d = canvas.getContext('2d').getImageData(X, Y, W, H).data;
      let dark = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 300) dark++;
      return dark;
    };
  });
}

/**
 * Renders the preview of a located citation on the real page (real CSP,
 * vendored pdf.js) and reports, for each highlight, whether the canvas has
 * ink under it and under the same box moved up by two of its heights.
 */
async function previewPdf(page, pdf, { rects = PDF_RECTS, pageNumber = 1 } = {}) {
  await installInk(page);
  return page.evaluate(async ({ b64, rects, pageNumber }) => {
    const m = await import('/assets/groundcite-render.js');
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const chunk = { chunk_id: 'manuals/refunds.pdf#chunk-0', content: 'Refunds are available within\n30 days of purchase.', source_title: 'Refunds manual', page_number: pageNumber };
    const citations = [{ chunk_id: chunk.chunk_id, source_text: chunk.content, span: { start: 0, end: [...chunk.content].length }, location: { page_number: pageNumber, rects } }];
    const box = document.getElementById('preview-body');
    document.getElementById('preview').hidden = false;
    const result = await new Promise((resolve) => {
      m.renderPreview(box, chunk, citations, { source_title: 'Refunds manual', page_number: pageNumber }, {
        loadDocument: async (id) => (id === chunk.chunk_id ? bytes.buffer : Promise.reject(new Error(`asked for ${id}`))),
        onPage: (hls, err) => resolve({ hls, err: err ? String(err.message || err) : null }),
      });
    });
    if (result.err) return { error: result.err, text: box.textContent };
    const wrap = box.querySelector('.gc-pdf-page');
    const canvas = wrap.querySelector('canvas');
    const ink = (x, y, w, h) => window.gcInk(canvas, x, y, w, h);
    return {
      role: wrap.getAttribute('role'),
      label: wrap.getAttribute('aria-label'),
      size: [canvas.clientWidth, canvas.clientHeight],
      text: box.querySelector('.gc-preview-text')?.textContent,
      marks: box.querySelectorAll('mark.gc-span').length,
      boxes: result.hls.map((h, i, all) => {
        const x = h.offsetLeft, y = h.offsetTop, w = h.offsetWidth, hh = h.offsetHeight;
        // "Away": the same box moved two of its thicknesses away from the
        // other line (up or down the page; sideways on a rotated page,
        // where the lines run down the screen), which is blank paper.
        const o = all[all.length - 1 - i];
        const side = (a, b) => (a >= b ? 1 : -1);
        const away = w > hh
          ? ink(x, y + side(y, o.offsetTop) * 2 * hh, w, hh)
          : ink(x + side(x, o.offsetLeft) * 2 * w, y, w, hh);
        return { x, y, w, h: hh, ink: ink(x, y, w, hh), away };
      }),
    };
  }, { b64: pdf.toString('base64'), rects, pageNumber });
}

describe('PDF page previewer', () => {
  test('the cited page is drawn with the quote highlighted across its line break; the text stays for screen readers', async () => {
    const page = await newPage();
    await openApp(page);
    const r = await previewPdf(page, makePdf());
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.role, 'img');
    assert.match(r.label, /^Page 1 of Refunds manual/);
    assert.ok(r.size[1] > r.size[0], `a portrait page: ${r.size}`);
    assert.equal(r.boxes.length, 2, 'one highlight per line of the quote');
    for (const b of r.boxes) {
      assert.ok(b.ink > 20, `ink under the highlight: ${JSON.stringify(b)}`);
      assert.equal(b.away, 0, `no ink beyond the quote's lines: ${JSON.stringify(b)}`);
      assert.ok(b.w > b.h, `a line runs across: ${JSON.stringify(b)}`);
    }
    // PDF y grows upwards, the screen's downwards: the first line is higher.
    assert.ok(r.boxes[0].y < r.boxes[1].y, JSON.stringify(r.boxes));
    assert.match(r.text, /30 days of purchase/);
    assert.equal(r.marks, 1, 'the verbatim quote is still marked in the text');
    assert.deepEqual(page.errors, []);
    await shot(page, 'pdf-preview');
    await page.close();
  });

  test('a rotated page (/Rotate 90): the rectangles follow the rotation', async () => {
    const page = await newPage();
    await openApp(page);
    const r = await previewPdf(page, makePdf({ rotate: 90 }));
    assert.equal(r.error, undefined, r.error);
    assert.ok(r.size[0] > r.size[1], `landscape on screen: ${r.size}`);
    assert.equal(r.boxes.length, 2);
    for (const b of r.boxes) {
      assert.ok(b.ink > 20, `ink under the highlight: ${JSON.stringify(b)}`);
      assert.equal(b.away, 0, `no ink beside it: ${JSON.stringify(b)}`);
      assert.ok(b.h > b.w, `the line runs down the screen: ${JSON.stringify(b)}`);
    }
    assert.deepEqual(page.errors, []);
    await shot(page, 'pdf-preview-rotated');
    await page.close();
  });

  test('a corrupt PDF, a missing page and hostile rectangles fail visibly, and the text preview stays', async () => {
    const page = await newPage();
    await openApp(page);
    const bad = await previewPdf(page, Buffer.from('%PDF-1.4 this is not a PDF at all'));
    assert.match(bad.error, /./);
    assert.match(bad.text, /could not be shown/);
    const missing = await previewPdf(page, makePdf(), { pageNumber: 7 });
    assert.match(missing.error, /1 pages, not 7/);
    const hostile = await previewPdf(page, makePdf(), { rects: [[NaN, 0, 1, 1], ['1', 2, 3, 4], [1, 2, 3], ...PDF_RECTS] });
    assert.equal(hostile.error, undefined, hostile.error);
    assert.equal(hostile.boxes.length, 2, 'only the well-formed rectangles are drawn');
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe('asking over a folder of PDFs (real service, embedded model, index, extraction)', () => {
  test('the answer cites page 2 of the PDF, and its footnote opens that page with the quote highlighted', async () => {
    const page = await newPage();
    await openApp(page, `${PDF_URL}/`);
    await page.fill('#question', 'within how many days of buying can i get a refund?');
    await page.click('#ask-submit');
    // The debug build's embedded model on a busy CI machine: minutes, not seconds.
    await page.locator('#trace-link:not([hidden])').waitFor({ timeout: 400_000 });
    await page.waitForFunction(() => document.getElementById('ask-submit').disabled === false);
    const claim = page.locator('#answer .gc-claim', { hasText: /30 days/ });
    assert.equal(await claim.count(), 1, await page.locator('#answer').textContent());
    // The popover names the page (the contract's sources[].page_number).
    const marker = claim.locator('.gc-marker').first();
    await marker.hover();
    await page.locator('#answer .gc-popover:not([hidden])').waitFor();
    assert.match(await page.locator('#answer .gc-popover:not([hidden])').textContent(), /page 2\b/);
    await page.mouse.move(0, 0);
    // Footnote → the PDF from GET /v1/chunks/{id}/document, drawn by pdf.js,
    // the server's rectangles (citations[].location) over the quote's lines.
    await marker.click();
    await page.locator('#preview-body .gc-pdf-page .gc-pdf-hl').first().waitFor({ timeout: 60_000 });
    await installInk(page);
    const r = await page.evaluate(() => {
      const wrap = document.querySelector('#preview-body .gc-pdf-page');
      const canvas = wrap.querySelector('canvas');
      const ink = (x, y, w, h) => window.gcInk(canvas, x, y, w, h);
      const hls = [...wrap.querySelectorAll('.gc-pdf-hl')];
      return {
        page: wrap.dataset.page,
        label: wrap.getAttribute('aria-label'),
        boxes: hls.map((h) => ({ y: h.offsetTop, w: h.offsetWidth, h: h.offsetHeight, ink: ink(h.offsetLeft, h.offsetTop, h.offsetWidth, h.offsetHeight) })),
        // Page 2's text is two lines near the top; everything below them is blank.
        below: ink(0, Math.max(...hls.map((h) => h.offsetTop + h.offsetHeight)) + 4, canvas.clientWidth, 200),
        mark: document.querySelector('#preview-body mark.gc-span')?.textContent ?? null,
      };
    });
    assert.equal(r.page, '2', JSON.stringify(r));
    assert.match(r.label, /^Page 2 of /);
    assert.ok(r.boxes.length >= 1 && r.boxes.length <= 2, JSON.stringify(r));
    for (const b of r.boxes) {
      assert.ok(b.ink > 20, `ink under the highlight: ${JSON.stringify(b)}`);
      assert.ok(b.w > b.h, `a line runs across: ${JSON.stringify(b)}`);
    }
    assert.equal(r.below, 0, `nothing highlighted below the quote is text: ${JSON.stringify(r)}`);
    assert.match(r.mark, /30 days/);
    assert.deepEqual(page.errors, []);
    await shot(page, 'ask-pdf');
    await page.context().close();
  });
});
