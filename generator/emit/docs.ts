// generated/docs/: agent guide, llms.txt, llms-full.txt (every operation in one file), one reference
// page per family, the portal's guides (docs/guides/<slug>.md) and search-index.json (pages and
// operations for the portal's client-side search), from handlebars templates.
//
// In a watcher an emit does work in proportion to the edit: what derives from one family alone (its
// view, reference page, search entries, counts; its blocks of the agent guide and llms.txt) is kept
// with the family (FamilyDocs, docs-each.ts), and what reads every family (the totals, the tools/list
// size, the pages that list every family) is put together again on each emit from those parts.
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { GENERATOR_DIR } from '../paths.ts';
import { DEFAULT_API_VERSION_HEADER, DEFAULT_MCP_TOOL_PREFIX, type JsonSchema, type McpToolDef } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model, ModelOperation } from '../model.ts';
import { COMPONENT_PREFIX } from '../schema.ts';
import { identityMemo, session } from '../session.ts';
import { generatedJson, MD_HEADER } from './format.ts';
import { dynamicToolsView } from './mcp-dynamic.ts';
import { entriesJson, entryJson, listBytesOf, toolsBytes } from './docs-memo.ts';
import { eachMemo, memoable, memoList, registerMemoEach, renderSpliced } from './docs-each.ts';
import { keptPieces, readsOfModel, type SchemaReads } from './family-memo.ts';
import type { GeneratedText } from './pieces.ts';
import { guideFacts, guidesOf, surfaceOf, type Guide } from './docs-guides.ts';

const TEMPLATE_DIR = new URL('templates/', GENERATOR_DIR);
const hb = Handlebars.create();
/** `{{count n "family" "families"}}`: "1 family", "23 families". */
export const countOf = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
hb.registerHelper('count', (n: unknown, one: unknown, many: unknown) => countOf(Number(n), String(one), String(many)));
/** `{{hints annotations}}`: "readOnlyHint true, openWorldHint false": the MCP annotations a tool has (a read has no destructive or idempotent hint). */
hb.registerHelper('hints', (a: unknown) =>
  ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']
    .filter((k) => typeof (a as Record<string, unknown> | null)?.[k] === 'boolean')
    .map((k) => `${k} ${String((a as Record<string, boolean>)[k])}`)
    .join(', '),
);
hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
hb.registerHelper('join', (list: unknown, sep: unknown) => (Array.isArray(list) ? list.join(typeof sep === 'string' ? sep : ', ') : ''));
registerMemoEach(hb);

const compiled = new Map<string, { template: HandlebarsTemplateDelegate; memoable: boolean }>();
function compile(name: string) {
  let entry = compiled.get(name);
  if (!entry) {
    const source = readFileSync(new URL(name, TEMPLATE_DIR), 'utf8');
    entry = { template: hb.compile(source, { noEscape: true, strict: false }), memoable: memoable(source) };
    compiled.set(name, entry);
  }
  return entry;
}

// Collapse runs of blank lines that optional sections leave behind; end with exactly one newline
// (trimEnd removes what /\s*$/ matches: white space and line terminators).
const collapse = (text: string) => text.replace(/\n{3,}/g, '\n\n');

function render(name: string, view: unknown): string {
  return `${collapse(compile(name).template(view)).trimEnd()}\n`;
}

/**
 * A page whose `list` (the families) is iterated by its template: in a watcher, when the template's
 * blocks read only their item, each family's block is kept by its view and spliced in (docs-each.ts).
 */
function renderWithList<T extends object>(name: string, view: Record<string, unknown>, list: string, items: T[], memo: ReturnType<typeof eachMemo>): string {
  const { template, memoable } = compile(name);
  if (!session.longLived || !memoable) return render(name, { ...view, [list]: items });
  return renderSpliced(`docs/${name}`, template, { ...view, [list]: memoList(items, memo) }, collapse);
}

/** One table cell: no pipes or line breaks. */
function cell(text: unknown): string {
  return typeof text === 'string' ? text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim() : '';
}

/** A short human description of a schema: `Id`, `array of Task`, `string (date) or null`, `one of a, b (closed)`. */
export function describeSchema(schema: JsonSchema | undefined): string {
  if (!schema) return 'any';
  if (typeof schema.$ref === 'string') return `\`${schema.$ref.replace(COMPONENT_PREFIX, '')}\``;
  if (Array.isArray(schema.enum)) {
    const openness = schema['x-svc-enum'] ? ` (${String(schema['x-svc-enum'])})` : '';
    return `one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}${openness}`;
  }
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``;
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : [];
  const main = types.filter((t) => t !== 'null');
  let text = main.length ? main.join(' or ') : 'any';
  if (main.length === 1 && main[0] === 'array') text = `array of ${describeSchema(schema.items as JsonSchema | undefined)}`;
  if (typeof schema.format === 'string') text += ` (${schema.format})`;
  if (types.includes('null')) text += ' or null';
  return text;
}

type OperationView = ReturnType<typeof operationView>;

function operationView(op: ModelOperation, model: Model) {
  const { def } = op;
  const props = (model.schemas[op.inputName].properties ?? {}) as Record<string, JsonSchema>;
  return {
    ...def,
    anchor: def.id.replace(/[^a-z0-9_]/g, ''),
    kindLabel: def.kind === 'read' ? 'read' : `command, tier ${def.tier}${def.tier === 1 ? ' (runs at once)' : ' (proposal, 202)'}`,
    isCommand: def.kind === 'command',
    description: op.description === def.summary ? '' : op.description,
    decision: op.decision ? cell(op.decision) : null,
    tool: def.mcp?.name ?? null,
    annotations: def.mcp?.annotations ?? null,
    reason: cell(def.mcpReason),
    inputs: op.inputs.map((i) => ({
      name: i.name,
      location: i.location,
      required: i.required || i.location === 'path',
      type: cell(describeSchema(props[i.name])),
      description: cell(props[i.name]?.description),
    })),
    output:
      def.kind === 'command'
        ? `\`result\` of the outcome envelope: ${describeSchema(model.schemas[op.outputName])}.`
        : def.paged
          ? `A page \`{items, nextCursor}\` of ${describeSchema(op.pageItem ?? undefined)}.`
          : def.stream
            ? `A Server-Sent Events stream (\`text/event-stream\`) of ${describeSchema(model.schemas[op.outputName])}.`
            : describeSchema(model.schemas[op.outputName]) + '.',
  };
}

interface FamilyView {
  name: string;
  description: string;
  operations: OperationView[];
}

/**
 * What the documents derive from one family alone: its view, what it adds to the counts, its reference
 * page and search-index entries, and (in a watcher) its tools' part of the tools/list size. They read
 * the family's name, description and operations (the same while the FamilyModel is the same object:
 * model.ts), model.schemas under the operations' input and output names (the family's SchemaReads:
 * family-memo.ts) and, for the page, the generated-file header (a constant in a watcher). So a part
 * is kept by the FamilyModel while its SchemaReads is the one it was built with; the templates'
 * blocks of the family are kept on `view` (docs-each.ts).
 */
interface FamilyDocs {
  reads: SchemaReads;
  view: FamilyView;
  readCount: number;
  commandCount: number;
  tools: McpToolDef[];
  toolBytes?: number;
  page?: FamilyPage;
  entries?: { family: string; operations: string };
}
const familyDocs = identityMemo<FamilyModel, FamilyDocs>();

function familyDocsOf(family: FamilyModel, reads: SchemaReads, model: Model): FamilyDocs {
  const known = familyDocs.get(family);
  if (known && known.reads === reads) return known;
  const ops = family.operations;
  return familyDocs.set(family, {
    reads,
    view: { name: family.name, description: cell(family.description), operations: ops.map((op) => operationView(op, model)) },
    readCount: ops.filter((o) => o.def.kind === 'read').length,
    commandCount: ops.filter((o) => o.def.kind === 'command').length,
    tools: ops.flatMap((o) => (o.def.mcp ? [o.def.mcp] : [])),
  });
}

/** What the documents show of the dynamic mode; in a watcher the tools/list size is summed from each family's (docs-memo.ts). */
function dynamicView(model: Model, parts: FamilyDocs[]) {
  if (!session.longLived) return dynamicToolsView(model);
  let bytes = 0;
  let count = 0;
  for (const part of parts) {
    bytes += part.toolBytes ??= toolsBytes(part.tools);
    count += part.tools.length;
  }
  return { ...dynamicToolsView({ ...model, operations: [] }), staticListKb: (listBytesOf(count, bytes) / 1024).toFixed(1) };
}

function baseView(model: Model, parts: FamilyDocs[]) {
  let readCount = 0;
  let commandCount = 0;
  let toolCount = 0;
  for (const part of parts) {
    readCount += part.readCount;
    commandCount += part.commandCount;
    toolCount += part.tools.length;
  }
  return {
    header: MD_HEADER.trimEnd(),
    title: model.info.title,
    version: model.info.version,
    apiVersion: model.service.apiVersion,
    apiVersionHeader: model.service.apiVersionHeader ?? DEFAULT_API_VERSION_HEADER,
    toolPrefix: model.service.mcpToolPrefix ?? DEFAULT_MCP_TOOL_PREFIX,
    description: cell(model.info.description),
    operationCount: model.operations.length,
    readCount,
    commandCount,
    familyCount: model.families.length,
    toolCount,
    scopeCount: model.scopes.length,
    eventTypeCount: model.eventTypes.length,
    limits: model.limits,
    /** svc.yaml features: the guides speak of client administrators and approvals only when they are on. */
    features: model.service.features,
    /** The contract has meta.get (GET /v1/meta): the guides send a caller there first. */
    hasMeta: model.operations.some((o) => o.def.id === 'meta.get'),
    /** What the contract has that the guides and the agent guide speak of (docs-guides.ts). */
    ...guideFacts(model, surfaceOf(model)),
    ...dynamicView(model, parts),
  };
}

/** Markdown without its generator comment and its first heading (to nest it in a larger file). */
function body(markdown: string): string {
  return markdown.replace(MD_HEADER, '').replace(/^# .*\n+/, '');
}

/** The search index's entries of a guide, a family and an operation. */
const guideEntry = (g: Guide) => ({ kind: 'guide', title: g.title, url: `/docs/${g.slug}`, text: g.summary });
const familyEntry = (f: FamilyView) => ({ kind: 'family', title: f.name, url: `/reference/${f.name}`, text: f.description });
const operationEntry = (f: FamilyView, op: OperationView) => ({
  kind: 'operation',
  title: op.id,
  url: `/reference/${f.name}#${op.anchor}`,
  text: `${op.summary} ${op.method} ${op.path}${op.tool ? ` ${op.tool}` : ''}`,
});

/**
 * A family's reference page and its section of llms-full.txt, kept with its part. In a watcher the
 * page's view is the header and the family, which is all the reference template reads: a fresh
 * compile passes the whole base view as well, so should the template ever read more (a count, the
 * title), test/generator/incremental.test.ts fails until the key covers it.
 */
interface FamilyPage {
  file: string;
  markdown: string;
  section: string;
}

function familyPage(part: FamilyDocs, base: ReturnType<typeof baseView>): FamilyPage {
  if (part.page) return part.page;
  const family = part.view;
  const markdown = render('reference-family.md.hbs', session.longLived ? { header: base.header, ...family } : { ...base, ...family });
  return (part.page = {
    file: `docs/reference/${family.name}.md`,
    markdown,
    section: `# ${family.name}\n\n${body(markdown).replace(/^(#+) /gm, '#$1 ')}`,
  });
}

/** A watcher's search-index entries of a family (its own, and its operations' joined), kept with its part. */
function familyEntriesOf(part: FamilyDocs): { family: string; operations: string } {
  const family = part.view;
  return (part.entries ??= { family: entryJson(familyEntry(family)), operations: family.operations.map((op) => entryJson(operationEntry(family, op))).join(',\n    ') });
}

/** Each `{{#each families}}` block's texts by family (a watcher's: memoList). */
const agentGuideFamilies = eachMemo();
const llmsFamilies = eachMemo();

export function emitDocs(model: Model): Map<string, GeneratedText> {
  const files = new Map<string, GeneratedText>();
  const reads = readsOfModel(model);
  const parts: FamilyDocs[] = [];
  const families: FamilyView[] = [];
  for (let i = 0; i < model.families.length; i++) {
    const part = familyDocsOf(model.families[i]!, reads[i]!, model);
    parts.push(part);
    families.push(part.view);
  }
  const base = baseView(model, parts);
  files.set(
    'docs/agent-guide.md',
    renderWithList(
      'agent-guide.md.hbs',
      { ...base, problems: model.problems, scopes: model.scopes.map((s) => ({ ...s, description: cell(s.description) })), eventTypes: model.eventTypes },
      'families',
      families,
      agentGuideFamilies,
    ),
  );
  const guideList = guidesOf(base);
  files.set('docs/llms.txt', renderWithList('llms.txt.hbs', { ...base, guides: guideList }, 'families', families, llmsFamilies));
  const sections: string[] = [];
  for (const part of parts) {
    const page = familyPage(part, base);
    files.set(page.file, page.markdown);
    sections.push(page.section);
  }
  const guideView = {
    ...base,
    problems: model.problems,
    eventTypes: model.eventTypes,
    webhookOperations: families.find((f) => f.name === 'webhooks')?.operations ?? [],
  };
  const guides = guideList.map((g) => ({ ...g, markdown: render(`guides/${g.slug}.md.hbs`, guideView) }));
  for (const g of guides) files.set(`docs/guides/${g.slug}.md`, g.markdown);
  // Every operation in one Markdown file: the families' reference pages one after the other.
  files.set(
    'docs/llms-full.txt',
    keptPieces(
      'docs/llms-full.txt',
      sections,
      '\n',
      `${MD_HEADER}# ${base.title}: every operation\n\n> ${base.description}\n\nContract ${base.version}: ${base.operationCount} operations in ${countOf(base.familyCount, 'family', 'families')}. ` +
        `Send \`Authorization: Bearer <credential>\`${base.metaPath ? `; call \`GET ${base.metaPath}\` first` : ''}. The rules every call follows are in /agent-guide.md.\n\n`,
    ),
  );
  files.set(
    'docs/search-index.json',
    session.longLived
      ? searchIndex(guides, parts)
      : generatedJson({
          entries: [...guides.map(guideEntry), ...families.map(familyEntry), ...families.flatMap((f) => f.operations.map((op) => operationEntry(f, op)))],
        }),
  );
  return files;
}

/** A watcher's search-index.json: the guides' entries, then each family's, then each family's operations' (docs-memo.ts entriesJson). */
function searchIndex(guides: readonly Guide[], parts: FamilyDocs[]): GeneratedText {
  const pieces = guides.map((g) => entryJson(guideEntry(g)));
  const operations: string[] = [];
  for (const part of parts) {
    const entries = familyEntriesOf(part);
    pieces.push(entries.family);
    operations.push(entries.operations);
  }
  for (const text of operations) pieces.push(text);
  return entriesJson(pieces);
}
