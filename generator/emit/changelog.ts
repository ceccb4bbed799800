// generated/CHANGELOG.md: the contract's change log (svc.yaml `changelog`), newest release first,
// with Added / Deprecated / Removed per release. Served by the runtime at /changelog.
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { DEFAULT_API_VERSION_HEADER } from '../../runtime/contract-types.ts';
import { GENERATED_NOTE } from './format.ts';
import { GENERATOR_DIR } from '../paths.ts';
import { compareVersions } from '../snapshot.ts';

export interface ChangelogEntry {
  version: string;
  date: string | null;
  added: string[];
  deprecated: string[];
  removed: string[];
  /** Corrections made in place before the version went live (svc release --correct). */
  corrected: string[];
}

/** What the renderer needs: the Model (generator/model.ts) or a release snapshot both fit. */
export interface ChangelogSource {
  info?: { title?: string };
  service?: { title?: string; apiVersionHeader?: string };
  changelog: readonly { version: string; date?: string | null; added?: readonly string[]; deprecated?: readonly string[]; removed?: readonly string[]; corrected?: readonly string[] }[];
}

const hb = Handlebars.create();
let compiled: HandlebarsTemplateDelegate | null = null;

function template(): HandlebarsTemplateDelegate {
  compiled ??= hb.compile(readFileSync(new URL('templates/CHANGELOG.md.hbs', GENERATOR_DIR), 'utf8'), { noEscape: true, strict: false });
  return compiled;
}

/** One line per item: Markdown list items must not break across lines. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

export function renderChangelog(source: ChangelogSource): string {
  const releases: ChangelogEntry[] = [...source.changelog]
    .map((c) => ({
      version: String(c.version),
      date: c.date && c.date !== 'undefined' ? String(c.date) : null,
      added: (c.added ?? []).map(oneLine),
      deprecated: (c.deprecated ?? []).map(oneLine),
      removed: (c.removed ?? []).map(oneLine),
      corrected: (c.corrected ?? []).map(oneLine),
    }))
    .sort((a, b) => compareVersions(b.version, a.version));
  const title = source.info?.title ?? source.service?.title ?? 'the API';
  const apiVersionHeader = source.service?.apiVersionHeader ?? DEFAULT_API_VERSION_HEADER;
  return template()({ note: GENERATED_NOTE, title, apiVersionHeader, releases }).replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

/** The file the generator emits: `CHANGELOG.md` -> content. */
export function emitChangelog(source: ChangelogSource): Map<string, string> {
  return new Map([['CHANGELOG.md', renderChangelog(source)]]);
}
