// A strict reader of the Prometheus text exposition format (version 0.0.4, what Prometheus scrapes):
// every rule the format states is checked, and a violation throws with its line, so a test that
// parses /metrics proves the output is valid before it reads a value.
//   - `# HELP <name> <text>` (escapes \\ and \n) and `# TYPE <name> <counter|gauge|histogram|summary|untyped>`,
//     at most one of each per family, TYPE before the family's first sample; other `#` lines are comments;
//   - samples `name{label="value",...} value [timestamp]`: metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label
//     names [a-zA-Z_][a-zA-Z0-9_]* (not starting with __), label values with the escapes \\ \" \n
//     only, a label at most once, values as Go's ParseFloat reads them (NaN, ±Inf in any case), integer timestamps;
//   - a family's samples are contiguous; no two samples share a name and label set;
//   - histograms: _bucket samples carry `le`, cumulative counts never decrease, the +Inf bucket exists
//     and equals _count; summaries: quantile samples carry `quantile`.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A value as Prometheus reads it (Go's strconv.ParseFloat: NaN and Inf in any case, Inf with a sign). */
function parseValue(text: string, where: string): number {
  if (/^nan$/i.test(text)) return NaN;
  const inf = /^([+-]?)inf(?:inity)?$/i.exec(text);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  if (!FLOAT.test(text)) throw new Error(`${where}: "${text}" is not a sample value`);
  return Number(text);
}

/** The family a sample name belongs to: a histogram's or summary's _bucket/_sum/_count go to their base. */
function familyOf(sampleName: string, types: Map<string, MetricType>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const base = sampleName.slice(0, -suffix.length);
    const t = types.get(base);
    if (t === 'histogram' || (t === 'summary' && suffix !== '_bucket')) return base;
  }
  return sampleName;
}

function parseLabels(text: string, where: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1; // after '{'
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`${where}: a label without "="`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`${where}: "${name}" is not a label name`);
    if (name in labels) throw new Error(`${where}: the label ${name} appears twice`);
    i = eq + 1;
    if (text[i] !== '"') throw new Error(`${where}: the value of ${name} is not quoted`);
    i++;
    let value = '';
    for (;;) {
      const ch = text[i];
      if (ch === undefined) throw new Error(`${where}: the value of ${name} is not closed`);
      if (ch === '"') break;
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new Error(`${where}: "\\${next}" is not an escape of the format`);
        i += 2;
        continue;
      }
      if (ch === '\n') throw new Error(`${where}: a raw line feed in a label value`);
      value += ch;
      i++;
    }
    labels[name] = value;
    i++;
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`${where}: expected "," or "}" after the label ${name}`);
  }
}

/** Parses an exposition; throws at the first rule it breaks. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const types = new Map<string, MetricType>();
  const helps = new Map<string, string>();
  const seenSeries = new Set<string>();
  const closed = new Set<string>();
  let current: string | null = null;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) return; // a comment
      const [, kind, name, rest = ''] = m as unknown as [string, string, string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: "${name}" is not a metric name`);
      if (kind === 'TYPE') {
        if (types.has(name)) throw new Error(`${where}: a second TYPE line for ${name}`);
        if (families.has(name)) throw new Error(`${where}: TYPE of ${name} after its samples`);
        if (!TYPES.has(rest.trim() as MetricType)) throw new Error(`${where}: "${rest}" is not a metric type`);
        types.set(name, rest.trim() as MetricType);
      } else {
        if (helps.has(name)) throw new Error(`${where}: a second HELP line for ${name}`);
        helps.set(name, rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\')));
      }
      return;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`${where}: not a sample`);
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`${where}: "${name}" is not a metric name`);
    let rest = line.slice(nameEnd);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, where));
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === '') throw new Error(`${where}: expected a value and at most a timestamp`);
    const value = parseValue(fields[0]!, where);
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`${where}: "${fields[1]}" is not a timestamp`);
    const familyName = familyOf(name, types);
    if (current !== familyName) {
      if (closed.has(familyName)) throw new Error(`${where}: the samples of ${familyName} are not together`);
      if (current) closed.add(current);
      current = familyName;
    }
    const series = `${name}{${Object.entries(labels)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(',')}}`;
    if (seenSeries.has(series)) throw new Error(`${where}: the series ${series} appears twice`);
    seenSeries.add(series);
    let family = families.get(familyName);
    if (!family) {
      family = { name: familyName, type: types.get(familyName) ?? 'untyped', help: helps.get(familyName) ?? null, samples: [] };
      families.set(familyName, family);
    }
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) {
    family.help = helps.get(family.name) ?? null;
    if (family.type === 'histogram') checkHistogram(family);
    if (family.type === 'summary') {
      for (const s of family.samples) if (s.name === family.name && !('quantile' in s.labels)) throw new Error(`${family.name}: a summary sample without quantile`);
    }
  }
  return families;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: { le: number; value: number }[]; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      g.buckets.push({ le: parseValue(le, family.name), value: s.value });
    } else if (s.name === `${family.name}_count`) g.count = s.value;
    else if (s.name !== `${family.name}_sum`) throw new Error(`${family.name}: the sample ${s.name} is not a histogram's`);
  }
  for (const [key, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a.le - b.le);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]!.value < sorted[i - 1]!.value) throw new Error(`${family.name}${key}: bucket counts decrease`);
    const inf = sorted.at(-1);
    if (!inf || inf.le !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (g.count === undefined || g.count !== inf.value) throw new Error(`${family.name}${key}: _count ${g.count} differs from the +Inf bucket ${inf.value}`);
  }
}

/** The value of one sample (name and exactly these labels, ignoring none), or 0 when the series is absent. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(familyOf(name, new Map([...families.values()].map((f) => [f.name, f.type]))));
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = family?.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want);
  return found?.value ?? 0;
}

/** Every label value of every sample, with where it was seen. */
export function labelValues(families: Map<string, Family>): { metric: string; label: string; value: string }[] {
  const out: { metric: string; label: string; value: string }[] = [];
  for (const f of families.values()) for (const s of f.samples) for (const [label, value] of Object.entries(s.labels)) out.push({ metric: s.name, label, value });
  return out;
}
