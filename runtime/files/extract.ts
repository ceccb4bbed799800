// Reading proposed field values out of a document (an API's FileJob calls it): plain text ("Label: value" lines), CSV (a header row of labels over a
// row of values, or label,value rows) and PDF (its text, page by page, read as plain text). A value is
// proposed for a field whose label or key names it, coerced to the field's type; a value that does
// not fit the type is left out. Confidence: 0.95 when the field's key named it, 0.9 for its label,
// times 0.8 when the value had to be reformatted.
export interface ExtractFieldDef {
  key: string;
  label: string;
  type: string;
  choices?: string[];
}

export interface ProposedValue {
  key: string;
  value: string | number | boolean;
  confidence: number;
  page: number | null;
}

interface Pair {
  label: string;
  value: string;
  page: number | null;
}

export class UnreadableDocument extends Error {}

function norm(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '');
}

/** RFC 4180 rows (quoted cells, doubled quotes, CRLF or LF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell === '') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows.filter((r) => r.some((c) => c.trim() !== ''));
}

function linePairs(text: string, page: number | null): Pair[] {
  const pairs: Pair[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([^:=\t]{1,80}?)\s*[:=\t]\s*(.+?)\s*$/.exec(line);
    if (m) pairs.push({ label: m[1]!, value: m[2]!, page });
  }
  return pairs;
}

function csvPairs(text: string, fields: readonly ExtractFieldDef[]): Pair[] {
  const rows = parseCsv(text);
  if (rows.length === 0) return [];
  const names = new Set(fields.flatMap((f) => [norm(f.key), norm(f.label)]));
  const header = rows[0]!;
  const headerHits = header.filter((h) => names.has(norm(h))).length;
  if (rows.length >= 2 && headerHits >= 2 && headerHits >= header.length / 2) {
    const values = rows[1]!;
    return header.map((label, i) => ({ label, value: (values[i] ?? '').trim(), page: null }));
  }
  return rows.filter((r) => r.length >= 2).map((r) => ({ label: r[0]!.trim(), value: r[1]!.trim(), page: null }));
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

function isoDate(y: number, m: number, d: number): string | null {
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The value in the field's type and whether it had to be reformatted; null when it does not fit. */
function coerce(raw: string, field: ExtractFieldDef): { value: string | number | boolean; exact: boolean } | null {
  const text = raw.trim();
  if (text === '') return null;
  switch (field.type) {
    case 'text':
      return { value: text.slice(0, 10_000), exact: true };
    case 'number': {
      const cleaned = text.replace(/[,\s]/g, '');
      if (!/^-?\d+(\.\d+)?$/.test(cleaned)) return null;
      return { value: Number(cleaned), exact: cleaned === text };
    }
    case 'boolean': {
      const t = text.toLowerCase();
      if (['true', 'yes', 'y', '1'].includes(t)) return { value: true, exact: t === 'true' };
      if (['false', 'no', 'n', '0'].includes(t)) return { value: false, exact: t === 'false' };
      return null;
    }
    case 'date': {
      let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
      if (m) {
        const v = isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
        return v ? { value: v, exact: true } : null;
      }
      m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text); // US month/day/year
      if (m) {
        const v = isoDate(Number(m[3]), Number(m[1]), Number(m[2]));
        return v ? { value: v, exact: false } : null;
      }
      m = /^([A-Za-z]{3})[a-z]*\.? (\d{1,2}),? (\d{4})$/.exec(text);
      if (m && MONTHS.includes(m[1]!.toLowerCase())) {
        const v = isoDate(Number(m[3]), MONTHS.indexOf(m[1]!.toLowerCase()) + 1, Number(m[2]));
        return v ? { value: v, exact: false } : null;
      }
      return null;
    }
    case 'choice': {
      const hit = (field.choices ?? []).find((c) => c === text) ?? (field.choices ?? []).find((c) => c.toLowerCase() === text.toLowerCase());
      return hit === undefined ? null : { value: hit, exact: hit === text };
    }
    default:
      return null; // file fields are not read out of a document
  }
}

/** Proposed values for `fields` from a document's pairs (first match per field wins). */
function propose(pairs: Pair[], fields: readonly ExtractFieldDef[]): ProposedValue[] {
  const out: ProposedValue[] = [];
  for (const field of fields) {
    for (const pair of pairs) {
      const label = norm(pair.label);
      if (label !== norm(field.key) && label !== norm(field.label)) continue;
      const fitted = coerce(pair.value, field);
      if (!fitted) continue;
      const confidence = 0.95 * (fitted.exact ? 1 : 0.8);
      out.push({ key: field.key, value: fitted.value, confidence: Math.round(confidence * 100) / 100, page: pair.page });
      break;
    }
  }
  return out;
}

/** PDF text per page (unpdf, a maintained wrapper of Mozilla's PDF.js). */
async function pdfPages(bytes: Buffer): Promise<string[]> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(pdf, { mergePages: false });
  return text;
}

export async function extractValues(bytes: Buffer, contentType: string, fields: readonly ExtractFieldDef[]): Promise<ProposedValue[]> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf') {
    let pages: string[];
    try {
      pages = await pdfPages(bytes);
    } catch (err) {
      throw new UnreadableDocument(`The PDF could not be read: ${(err as Error).message}`);
    }
    return propose(pages.flatMap((text, i) => linePairs(text, i + 1)), fields);
  }
  const text = bytes.toString('utf8');
  if (type === 'text/csv') return propose(csvPairs(text, fields), fields);
  if (type.startsWith('text/')) return propose(linePairs(text, null), fields);
  throw new UnreadableDocument(`Documents of type ${type} are not read; send text/plain, text/csv or application/pdf.`);
}
