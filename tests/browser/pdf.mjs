// Small PDFs written by the browser tests (Helvetica, no embedded font):
// one text line per entry of `pages[i]`, 20 pt, `leading` points apart from
// y = 700 (40: a paragraph per line; 24: one paragraph, lines wrapped).
// `rotate` sets every page's /Rotate; the contract's rectangles stay in the
// unrotated page's space. Also run as a script by scripts/browser-tests:
//   node tests/browser/pdf.mjs OUT.pdf   (the e2e folder's two-page manual)

import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const QUOTE_LINES = ['Refunds are available within', '30 days of purchase.'];

/** The two-page manual the end-to-end test asks about (page 2 answers);
 * each page one paragraph of two wrapped lines. */
export const MANUAL_PAGES = [
  ['Standard shipping takes 3 to 5', 'business days inside the country.'],
  QUOTE_LINES,
];

const escape = (s) => s.replace(/[\\()]/g, (c) => `\\${c}`);

export function makePdf({ rotate = 0, pages = [QUOTE_LINES], leading = 40 } = {}) {
  const n = pages.length;
  // 1 catalog, 2 pages, 3 font, then a page and its content stream per page.
  const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  for (const [i, lines] of pages.entries()) {
    const content = `BT /F1 20 Tf 72 700 Td ${lines.map((l) => `(${escape(l)}) Tj`).join(` 0 -${leading} Td `)} ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate ${rotate} /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    );
  }
  objects.push('<< /Title (Customer manual) >>');
  let out = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info ${objects.length} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(process.argv[2], makePdf({ pages: MANUAL_PAGES, leading: 24 }));
}
