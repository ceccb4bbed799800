// generated/docs/: agent guide, llms.txt, llms-full.txt (every operation in one file), one reference
// page per family, the portal's guides (docs/guides/<slug>.md) and search-index.json (pages and
// operations for the portal's client-side search), from handlebars templates.
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { GENERATOR_DIR } from '../paths.ts';
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { Model, ModelOperation } from '../model.ts';
import { COMPONENT_PREFIX } from '../schema.ts';
import { generatedJson, MD_HEADER } from './format.ts';
import { dynamicToolsView } from './mcp-dynamic.ts';

const TEMPLATE_DIR = new URL('templates/', GENERATOR_DIR);
const hb = Handlebars.create();
hb.registerHelper('join', (list: unknown, sep: unknown) => (Array.isArray(list) ? list.join(typeof sep === 'string' ? sep : ', ') : ''));

const compiled = new Map<string, HandlebarsTemplateDelegate>();
function render(name: string, view: unknown): string {
  let template = compiled.get(name);
  if (!template) {
    template = hb.compile(readFileSync(new URL(name, TEMPLATE_DIR), 'utf8'), { noEscape: true, strict: false });
    compiled.set(name, template);
  }
  // Collapse runs of blank lines that optional sections leave behind; end with exactly one newline.
  return template(view).replace(/\n{3,}/g, '\n\n').replace(/\s*$/, '\n');
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
    ...dynamicToolsView(model),
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

export function emitDocs(model: Model): Map<string, string> {
  const files = new Map<string, string>();
  const families = model.families.map((f) => ({
    name: f.name,
    description: cell(f.description),
    operations: f.operations.map((op) => operationView(op, model)),
  }));
  const base = baseView(model);
  files.set(
    'docs/agent-guide.md',
    render('agent-guide.md.hbs', {
      ...base,
      problems: model.problems,
      scopes: model.scopes.map((s) => ({ ...s, description: cell(s.description) })),
      eventTypes: model.eventTypes,
      families,
    }),
  );
  files.set('docs/llms.txt', render('llms.txt.hbs', { ...base, families, guides: GUIDES }));
  const references = families.map((family) => ({ family, markdown: render('reference-family.md.hbs', { ...base, ...family }) }));
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
      references.map(({ family, markdown }) => `# ${family.name}\n\n${body(markdown).replace(/^(#+) /gm, '#$1 ')}`).join('\n'),
  );
  files.set(
    'docs/search-index.json',
    generatedJson({
      entries: [
        ...guides.map((g) => ({ kind: 'guide', title: g.title, url: `/docs/${g.slug}`, text: g.summary })),
        ...families.map((f) => ({ kind: 'family', title: f.name, url: `/reference/${f.name}`, text: f.description })),
        ...families.flatMap((f) =>
          f.operations.map((op) => ({
            kind: 'operation',
            title: op.id,
            url: `/reference/${f.name}#${op.anchor}`,
            text: `${op.summary} ${op.method} ${op.path}${op.tool ? ` ${op.tool}` : ''}`,
          })),
        ),
      ],
    }),
  );
  return files;
}
