// The ranking behind the dynamic mode's search meta-tool: BM25 over the contract's own words of each
// tool (its name, summary and description, and its family, which is the operation's OpenAPI tag),
// each field saturating on its own (BM25F), the name and summary weighing most. Built once when /mcp is mounted; a query only tokenizes its
// words and sums precomputed weights over the (few dozen) tools.
//
// Words are lower-cased, split on anything not a letter or digit, stripped of a few common English
// endings (so "creates", "created" and "creating" meet "create") and of stop words. A query word
// also matches the longer words it begins (at 0.6: "approve" finds approvals) and, when it
// matches nothing else, from five letters, the words one edit away (a typo, at a third).

/** Words that carry no meaning for finding a tool. */
const STOP_WORDS = new Set(
  'a all am an and any are as at be by can do for from get has have how i in into is it its me my of on or our please some svc that the their them this to use want we what when which who with you your'.split(' '),
);

/** BM25 parameters (the usual ones). */
const K1 = 1.2;
const B = 0.75;
/** How much a prefix or a one-edit match counts against an exact one. */
const PREFIX_WEIGHT = 0.6;
const TYPO_WEIGHT = 0.3;
const MIN_PREFIX = 3;
const MIN_TYPO = 5;

/** A word's stem: plural and verb endings off, then a final e (create, creates, created -> creat). */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (!w.endsWith(suffix) || w.length - suffix.length < 3) continue;
    if (suffix === 's' && /(ss|us|is)$/.test(w)) break;
    w = w.slice(0, -suffix.length);
    break;
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** Text -> the stems of its meaningful words, in order (repeats kept: they count). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  // clientId -> client id, so a field name's words are words.
  const spaced = text.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2');
  for (const word of spaced.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word === '' || STOP_WORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

/** One searchable tool: its name and its weighted fields. */
export interface SearchDocument {
  name: string;
  fields: readonly { text: string; weight: number }[];
}

/** At most one insertion, deletion, substitution or transposition between a and b. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  const [long, short] = a.length > b.length ? [a, b] : [b, a];
  return long.slice(i + 1) === short.slice(i);
}

export class ToolSearch {
  /** stem -> (document index -> its frequency in each field). */
  private readonly postings = new Map<string, Map<number, number[]>>();
  private readonly idf = new Map<string, number>();
  /** Words in each field of each document, and their mean per field. */
  private readonly lengths: number[][];
  private readonly averageLengths: number[];
  private readonly weights: number[];
  private readonly names: string[];

  constructor(documents: readonly SearchDocument[]) {
    this.names = documents.map((d) => d.name);
    const fieldCount = Math.max(0, ...documents.map((d) => d.fields.length));
    this.weights = Array.from({ length: fieldCount }, (_, f) => documents.find((d) => d.fields[f])?.fields[f]!.weight ?? 0);
    this.lengths = documents.map((doc, i) =>
      doc.fields.map((field, f) => {
        const terms = tokenize(field.text);
        for (const term of terms) {
          const posting = this.postings.get(term) ?? new Map<number, number[]>();
          const tf = posting.get(i) ?? new Array<number>(fieldCount).fill(0);
          tf[f]! += 1;
          posting.set(i, tf);
          this.postings.set(term, posting);
        }
        return terms.length;
      }),
    );
    this.averageLengths = this.weights.map((_, f) => this.lengths.reduce((sum, l) => sum + (l[f] ?? 0), 0) / Math.max(1, documents.length) || 1);
    const n = documents.length;
    for (const [term, posting] of this.postings) this.idf.set(term, Math.log(1 + (n - posting.size + 0.5) / (posting.size + 0.5)));
  }

  /** BM25 of a word in a document: each field saturates on its own, then the fields add up by weight. */
  private score(doc: number, tf: readonly number[]): number {
    let sum = 0;
    for (let f = 0; f < tf.length; f++) {
      const n = tf[f]!;
      if (n === 0) continue;
      const norm = n + K1 * (1 - B + (B * (this.lengths[doc]![f] ?? 0)) / this.averageLengths[f]!);
      sum += this.weights[f]! * ((n * (K1 + 1)) / norm);
    }
    return sum;
  }

  /**
   * The vocabulary's stems a query stem matches, each with the weight of that match: itself, the
   * longer words it begins (approv -> approval), and, when neither exists, the words one edit away.
   */
  private matches(term: string): [string, number][] {
    const found: [string, number][] = this.postings.has(term) ? [[term, 1]] : [];
    if (term.length >= MIN_PREFIX) for (const word of this.postings.keys()) if (word !== term && word.startsWith(term)) found.push([word, PREFIX_WEIGHT]);
    if (found.length === 0 && term.length >= MIN_TYPO) for (const word of this.postings.keys()) if (oneEditApart(term, word)) found.push([word, TYPO_WEIGHT]);
    return found;
  }

  /**
   * The names of the documents that match `query`, best first (ties by name), among those `allowed`
   * admits, at most `max`.
   */
  search(query: string, allowed: (name: string) => boolean, max: number): string[] {
    const scores = new Map<number, number>();
    for (const term of new Set(tokenize(query))) {
      for (const [word, weight] of this.matches(term)) {
        const idf = this.idf.get(word)!;
        for (const [doc, tf] of this.postings.get(word)!) scores.set(doc, (scores.get(doc) ?? 0) + weight * idf * this.score(doc, tf));
      }
    }
    return [...scores]
      .filter(([doc]) => allowed(this.names[doc]!))
      .sort(([a, x], [b, y]) => y - x || (this.names[a]! < this.names[b]! ? -1 : 1))
      .slice(0, max)
      .map(([doc]) => this.names[doc]!);
  }
}
