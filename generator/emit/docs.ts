// generated/docs/: agent guide, llms.txt, llms-full.txt (every operation in one file), one reference
// page per family, the portal's guides (docs/guides/<slug>.md) and search-index.json (pages and
// operations for the portal's client-side search), from handlebars templates. In a watcher, what
// derives from one operation or one family is kept by its identity (operationViews, familyViews,
// referencePages, and each family's part of the aggregate files: docs-memo.ts); what reads every
// family (counts, the tools/list size, the files' frames) is computed again on each emit.
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { GENERATOR_DIR } from '../paths.ts';
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model, ModelOperation } from '../model.ts';
import { COMPONENT_PREFIX } from '../schema.ts';
import { identityMemo, session } from '../session.ts';
import { generatedJson, MD_HEADER } from './format.ts';
import { dynamicToolsView } from './mcp-dynamic.ts';
import { eachMemo, entriesJson, entryJson, memoable, memoList, registerMemoEach, staticListBytes } from './docs-memo.ts';

const TEMPLATE_DIR = new URL('templates/', GENERATOR_DIR);
const hb = Handlebars.create();
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

function render(name: string, view: unknown): string {
  // Collapse runs of blank lines that optional sections leave behind; end with exactly one newline
  // (trimEnd removes what /\s*$/ matches: white space and line terminators).
  return `${compile(name).template(view).replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

/** In a watcher, `items` as a memoList of `memo` when the template's blocks read only their item; else `items`. */
function listFor<T extends object>(name: string, items: T[], memo: ReturnType<typeof eachMemo>): T[] {
  return session.longLived && compile(name).memoable ? memoList(items, memo) : items;
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

/**
 * An operation's view by the operation's identity, with the two schemas the view reads besides the
 * operation (model.schemas under its input and output names: the same objects while the operation
 * is, checked all the same).
 */
const operationViews = identityMemo<ModelOperation, { view: OperationView; input: JsonSchema | undefined; output: JsonSchema | undefined }>();

function operationViewOf(op: ModelOperation, model: Model): OperationView {
  const input = model.schemas[op.inputName];
  const output = model.schemas[op.outputName];
  const known = operationViews.get(op);
  if (known && known.input === input && known.output === output) return known.view;
  return operationViews.set(op, { view: operationView(op, model), input, output }).view;
}

interface FamilyView {
  name: string;
  description: string;
  operations: OperationView[];
}

/**
 * A family's view by the FamilyModel's identity (the same object while its name, description and
 * operations are), kept while its operations' views are the same objects too. Every page and entry
 * memoised below is keyed on this object.
 */
const familyViews = identityMemo<FamilyModel, FamilyView>();

function familyViewOf(family: FamilyModel, model: Model): FamilyView {
  const operations = family.operations.map((op) => operationViewOf(op, model));
  const known = familyViews.get(family);
  if (known && known.operations.length === operations.length && known.operations.every((view, i) => view === operations[i])) return known;
  return familyViews.set(family, { name: family.name, description: cell(family.description), operations });
}

/** What the documents show of the dynamic mode; in a watcher the tools/list size is summed from each tool's (docs-memo.ts). */
function dynamicView(model: Model) {
  if (!session.longLived) return dynamicToolsView(model);
  const tools = model.operations.flatMap((o) => (o.def.mcp ? [o.def.mcp] : []));
  return { ...dynamicToolsView({ ...model, operations: [] }), staticListKb: (staticListBytes(tools) / 1024).toFixed(1) };
}

function baseView(model: Model) {
  const ops = model.operations;
  return {
    header: MD_HEADER.trimEnd(),
    title: model.info.title,
    version: model.info.version,
    apiVersion: model.service.apiVersion,
    description: cell(model.info.description),
    operationCount: ops.length,
    readCount: ops.filter((o) => o.def.kind === 'read').length,
    commandCount: ops.filter((o) => o.def.kind === 'command').length,
    familyCount: model.families.length,
    toolCount: ops.filter((o) => o.def.mcp).length,
    scopeCount: model.scopes.length,
    eventTypeCount: model.eventTypes.length,
    limits: model.limits,
    ...dynamicView(model),
  };
}

/** The portal's guides (served at /docs/<slug>); `{base_url}` in them is the server's base URL. */
export const GUIDES = [
  { slug: 'rest', title: 'Connect over REST', summary: 'A first call, paging, safe writes and typed clients.' },
  { slug: 'mcp', title: 'Connect over MCP', summary: 'The MCP server and a configuration for each popular MCP client.' },
  { slug: 'oauth', title: 'OAuth for client administrators', summary: 'Signing in, tokens, audiences and the scopes a grant carries.' },
  { slug: 'webhooks', title: 'Webhooks', summary: 'Signed event deliveries, secrets, tests and replays; the events feed.' },
  { slug: 'errors', title: 'Errors and retries', summary: 'Problem documents, every code, and when to retry.' },
] as const;

/** Markdown without its generator comment and its first heading (to nest it in a larger file). */
function body(markdown: string): string {
  return markdown.replace(MD_HEADER, '').replace(/^# .*\n+/, '');
}

/** The search index's entries of a guide, a family and an operation. */
const guideEntry = (g: (typeof GUIDES)[number]) => ({ kind: 'guide', title: g.title, url: `/docs/${g.slug}`, text: g.summary });
const familyEntry = (f: FamilyView) => ({ kind: 'family', title: f.name, url: `/reference/${f.name}`, text: f.description });
const operationEntry = (f: FamilyView, op: OperationView) => ({
  kind: 'operation',
  title: op.id,
  url: `/reference/${f.name}#${op.anchor}`,
  text: `${op.summary} ${op.method} ${op.path}${op.tool ? ` ${op.tool}` : ''}`,
});

/**
 * A family's reference page and its section of llms-full.txt, by its FamilyView's identity. In a
 * watcher the page's view is the header and the family, which is all the reference template reads:
 * a fresh compile passes the whole base view as well, so should the template ever read more (a
 * count, the title), test/generator/incremental.test.ts fails until the key covers it.
 */
const familyPages = identityMemo<FamilyView, { markdown: string; section: string }>();

function familyPage(family: FamilyView, base: ReturnType<typeof baseView>): { markdown: string; section: string } {
  const known = familyPages.get(family);
  if (known) return known;
  const markdown = render('reference-family.md.hbs', session.longLived ? { header: base.header, ...family } : { ...base, ...family });
  return familyPages.set(family, { markdown, section: `# ${family.name}\n\n${body(markdown).replace(/^(#+) /gm, '#$1 ')}` });
}

/** A watcher's search-index entries of a family (its own, and its operations' joined), by its FamilyView's identity. */
const familyEntries = identityMemo<FamilyView, { family: string; operations: string }>();

function familyEntriesOf(family: FamilyView): { family: string; operations: string } {
  return (
    familyEntries.get(family) ??
    familyEntries.set(family, { family: entryJson(familyEntry(family)), operations: family.operations.map((op) => entryJson(operationEntry(family, op))).join(',\n    ') })
  );
}

/** Each `{{#each families}}` block's texts by family (a watcher's: memoList). */
const agentGuideFamilies = eachMemo();
const llmsFamilies = eachMemo();

export function emitDocs(model: Model): Map<string, string> {
  const files = new Map<string, string>();
  const families = model.families.map((f) => familyViewOf(f, model));
  const base = baseView(model);
  files.set(
    'docs/agent-guide.md',
    render('agent-guide.md.hbs', {
      ...base,
      problems: model.problems,
      scopes: model.scopes.map((s) => ({ ...s, description: cell(s.description) })),
      eventTypes: model.eventTypes,
      families: listFor('agent-guide.md.hbs', families, agentGuideFamilies),
    }),
  );
  files.set('docs/llms.txt', render('llms.txt.hbs', { ...base, families: listFor('llms.txt.hbs', families, llmsFamilies), guides: GUIDES }));
  const references = families.map((family) => ({ family, ...familyPage(family, base) }));
  for (const { family, markdown } of references) files.set(`docs/reference/${family.name}.md`, markdown);
  const guideView = {
    ...base,
    problems: model.problems,
    eventTypes: model.eventTypes,
    webhookOperations: families.find((f) => f.name === 'webhooks')?.operations ?? [],
  };
  const guides = GUIDES.map((g) => ({ ...g, markdown: render(`guides/${g.slug}.md.hbs`, guideView) }));
  for (const g of guides) files.set(`docs/guides/${g.slug}.md`, g.markdown);
  // Every operation in one Markdown file: the families' reference pages one after the other.
  files.set(
    'docs/llms-full.txt',
    `${MD_HEADER}# ${base.title}: every operation\n\n> ${base.description}\n\nContract ${base.version}: ${base.operationCount} operations in ${base.familyCount} families. ` +
      'Send `Authorization: Bearer <credential>`; call `GET /v1/meta` first. The rules every call follows are in /agent-guide.md.\n\n' +
      references.map(({ section }) => section).join('\n'),
  );
  files.set(
    'docs/search-index.json',
    session.longLived
      ? entriesJson([
          ...guides.map((g) => entryJson(guideEntry(g))),
          ...families.map((f) => familyEntriesOf(f).family),
          ...families.map((f) => familyEntriesOf(f).operations),
        ])
      : generatedJson({
          entries: [...guides.map(guideEntry), ...families.map(familyEntry), ...families.flatMap((f) => f.operations.map((op) => operationEntry(f, op)))],
        }),
  );
  return files;
}
