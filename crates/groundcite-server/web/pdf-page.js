// The cited PDF page with the verified quote highlighted: pdf.js (vendored,
// loaded only when a PDF page is previewed) draws the page on a canvas and
// the contract's rectangles (PDF points, unrotated page, origin bottom left:
// docs/contract.md) are mapped through the page's viewport, which applies
// the page's own rotation. The canvas is an image to assistive technology;
// the verbatim quote stays in the text preview beside it.

const PDFJS = '/assets/pdf.min.mjs';
const WORKER = '/assets/pdf.worker.min.mjs';
/** CSS pixels of the page's width on screen (before the device pixel ratio). */
const PAGE_WIDTH = 560;

let pdfjs = null;
async function loadPdfjs() {
  if (!pdfjs) {
    pdfjs = import(PDFJS).then((m) => {
      m.GlobalWorkerOptions.workerSrc = WORKER;
      return m;
    });
  }
  return pdfjs;
}

/**
 * Renders page `page` of the PDF `data` (ArrayBuffer) into `container`
 * with `rects` highlighted. Resolves to the highlight elements; throws
 * (with a message for the user) when the PDF cannot be read or has no such
 * page.
 */
export async function renderPdfPage(container, data, { page, rects, label }) {
  const lib = await loadPdfjs();
  // No eval (the page's CSP has no unsafe-eval); fonts through the FontFace
  // API; nothing fetched besides the bytes given.
  const task = lib.getDocument({
    data: new Uint8Array(data),
    isEvalSupported: false,
    disableAutoFetch: true,
    disableStream: true,
    stopAtErrors: false,
  });
  const doc = await task.promise;
  try {
    if (page > doc.numPages) throw new Error(`the document has ${doc.numPages} pages, not ${page}`);
    const p = await doc.getPage(page);
    const base = p.getViewport({ scale: 1 });
    const viewport = p.getViewport({ scale: PAGE_WIDTH / base.width });
    const ratio = Math.min(globalThis.devicePixelRatio || 1, 3);
    const canvas = document.createElement('canvas');
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = `${Math.floor(viewport.width)}px`;
    canvas.style.height = `${Math.floor(viewport.height)}px`;
    canvas.setAttribute('aria-hidden', 'true');
    const wrap = document.createElement('div');
    wrap.className = 'gc-pdf-page';
    wrap.setAttribute('role', 'img');
    wrap.setAttribute('aria-label', label || `Page ${page}, the cited passage highlighted`);
    wrap.dataset.page = String(page);
    wrap.style.width = canvas.style.width;
    wrap.style.height = canvas.style.height;
    wrap.append(canvas);
    await p.render({
      canvas,
      viewport,
      transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0],
    }).promise;
    const marks = [];
    for (const r of rects) {
      // Both corners through the viewport: rotation and the flip of the
      // y axis (PDF origin bottom left, canvas top left) are its job.
      const [x1, y1] = viewport.convertToViewportPoint(r[0], r[1]);
      const [x2, y2] = viewport.convertToViewportPoint(r[2], r[3]);
      const hl = document.createElement('div');
      hl.className = 'gc-pdf-hl';
      hl.setAttribute('aria-hidden', 'true');
      hl.style.left = `${Math.min(x1, x2)}px`;
      hl.style.top = `${Math.min(y1, y2)}px`;
      hl.style.width = `${Math.abs(x2 - x1)}px`;
      hl.style.height = `${Math.abs(y2 - y1)}px`;
      wrap.append(hl);
      marks.push(hl);
    }
    container.replaceChildren(wrap);
    return marks;
  } finally {
    task.destroy();
  }
}
