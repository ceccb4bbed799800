// `svc diff` engine: compares two compiled contracts (their operations, schemas through $ref,
// allOf, oneOf and anyOf, scopes, tools and enumerations) and reports each difference as a Finding
// positioned at its place in the contract.
import { isObj, routeShape, type Obj } from '../raw.ts';
import { type JsonPath } from '../source.ts';
import { type Origin, type Side, type Snapshot } from '../snapshot.ts';
import { RULES, type Finding } from './rules.ts';
import { DEFAULT_API_VERSION_HEADER, DEFAULT_MCP_TOOL_PREFIX, type ServiceFeatures } from '../../runtime/contract-types.ts';

// ---------------------------------------------------------------------------------------------
// Schema comparison through $ref, allOf, oneOf and anyOf, tracking where each node is written.

interface Ref {
  raw: unknown;
  origin: Origin;
}

interface Kw {
  value: unknown;
  origin: Origin;
}

interface Norm {
  origin: Origin;
  kw: Map<string, Kw>;
  props: Map<string, Ref>;
  required: Map<string, Origin>;
  items: Ref | null;
  options: Ref[] | null;
  refs: string[];
}

const KEYWORDS = [
  'type',
  'enum',
  'x-svc-enum',
  'const',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'additionalProperties',
];

const LOWER: Record<string, string> = {
  minLength: 'input-length-narrowed',
  minimum: 'input-range-narrowed',
  exclusiveMinimum: 'input-range-narrowed',
  minItems: 'input-items-narrowed',
  minProperties: 'input-items-narrowed',
};
const UPPER: Record<string, string> = {
  maxLength: 'input-length-narrowed',
  maximum: 'input-range-narrowed',
  exclusiveMaximum: 'input-range-narrowed',
  maxItems: 'input-items-narrowed',
  maxProperties: 'input-items-narrowed',
};

function at(origin: Origin, ...more: JsonPath): Origin {
  return { ...origin, path: [...origin.path, ...more] } as Origin;
}

function normalize(ref: Ref, schemas: Record<string, Obj>): Norm {
  const n: Norm = { origin: ref.origin, kw: new Map(), props: new Map(), required: new Map(), items: null, options: null, refs: [] };
  const absorb = (raw: unknown, origin: Origin, stack: string[]) => {
    if (!isObj(raw)) return;
    if (typeof raw.$ref === 'string') {
      const name = raw.$ref;
      n.refs.push(name);
      if (!stack.includes(name) && schemas[name]) absorb(schemas[name], { kind: 'schema', key: name, path: [] }, [...stack, name]);
    }
    if (Array.isArray(raw.allOf)) raw.allOf.forEach((part, i) => absorb(part, at(origin, 'allOf', i), stack));
    for (const key of KEYWORDS) if (key in raw) n.kw.set(key, { value: raw[key], origin: at(origin, key) });
    if (isObj(raw.properties)) for (const [name, sub] of Object.entries(raw.properties)) n.props.set(name, { raw: sub, origin: at(origin, 'properties', name) });
    if (Array.isArray(raw.required)) raw.required.forEach((name, i) => n.required.set(String(name), at(origin, 'required', i)));
    if ('items' in raw) n.items = { raw: raw.items, origin: at(origin, 'items') };
    for (const key of ['oneOf', 'anyOf'])
      if (Array.isArray(raw[key])) n.options = [...(n.options ?? []), ...(raw[key] as unknown[]).map((o, i) => ({ raw: o, origin: at(origin, key, i) }))];
  };
  absorb(ref.raw, ref.origin, []);
  return n;
}

function typesOf(n: Norm): Set<string> | null {
  const t = n.kw.get('type')?.value;
  if (typeof t === 'string') return new Set(t === 'number' ? ['number', 'integer'] : [t]);
  if (Array.isArray(t)) {
    const s = new Set(t.map(String));
    if (s.has('number')) s.add('integer');
    return s;
  }
  return null;
}

const show = (v: unknown) => JSON.stringify(v);

/** A readable name for a schema node, derived from where it is written (so shared schemas read the same from every operation). */
export function labelOf(o: Origin): string {
  const named = o.kind === 'op' || o.kind === 'tool';
  let s = named ? `${o.key} ` : o.key;
  const p = o.path;
  for (let i = 0; i < p.length; i++) {
    const k = p[i];
    if (k === 'properties') s += (s.endsWith(' ') ? '' : '.') + String(p[++i]);
    else if (k === 'items') s += '[]';
    else if (k === 'additionalProperties') s += '{*}';
    else if (k === 'allOf') i++;
    else if (k === 'oneOf' || k === 'anyOf') s += `|${k}[${p[++i]}]`;
    else if (named && i === 0) s += k === 'page' ? 'items' : String(k);
    else break;
  }
  return s.trim();
}
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

class Differ {
  private readonly found = new Map<string, Finding & { users: Set<string> }>();
  private readonly visited = new Set<string>();
  private currentOp = '';

  constructor(
    readonly base: Side,
    readonly head: Side,
  ) {}

  private locate(side: 'base' | 'head', origin: Origin): string {
    const s = side === 'base' ? this.base : this.head;
    return s.locate(origin) ?? `${s.label}:1:1`;
  }

  add(rule: string, subject: string, message: string, side: 'base' | 'head', origin: Origin): void {
    const kind = RULES[rule]?.kind ?? 'breaking';
    const location = this.locate(side, origin);
    const key = `${rule}\u0000${subject}\u0000${location}`;
    const hit = this.found.get(key);
    if (hit) {
      if (this.currentOp) hit.users.add(this.currentOp);
      return;
    }
    this.found.set(key, { kind, rule, subject, message, location, users: new Set(this.currentOp ? [this.currentOp] : []) });
  }

  findings(): Finding[] {
    const out: Finding[] = [];
    for (const f of this.found.values()) {
      const { users, ...rest } = f;
      const others = [...users].filter((u) => u !== f.subject).sort();
      out.push(others.length && !(f.subject in this.head.snapshot.operations) && !(f.subject in this.base.snapshot.operations) ? { ...rest, message: `${rest.message} (used by ${others.join(', ')})` } : rest);
    }
    return out.sort((a, b) =>
      a.kind !== b.kind ? (a.kind === 'breaking' ? -1 : 1) : a.location < b.location ? -1 : a.location > b.location ? 1 : a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0,
    );
  }

  /** Compares two schemas: `dir` input (requests) or output (responses); `label` names the node for messages. */
  schema(b: Ref, h: Ref, dir: 'input' | 'output', topInput = false): void {
    const key = `${dir}|${show(b.origin)}|${show(h.origin)}`;
    if (this.visited.has(`${this.currentOp}|${key}`)) return;
    this.visited.add(`${this.currentOp}|${key}`);
    const B = normalize(b, this.base.snapshot.schemas);
    const H = normalize(h, this.head.snapshot.schemas);
    const hAt = (kw: string, fallback: Origin = H.origin) => H.kw.get(kw)?.origin ?? fallback;
    const label = labelOf(h.origin);
    const kl = (kw: string) => labelOf(hAt(kw));

    // Types.
    const bt = typesOf(B);
    const ht = typesOf(H);
    if (dir === 'input' && ht && (!bt || [...bt].some((t) => !ht.has(t)))) {
      const lost = bt ? [...bt].filter((t) => !ht.has(t)) : [];
      this.add(
        'input-type-narrowed',
        H.kw.get('type')!.origin.key,
        `${kl('type')}: accepts ${bt ? `type ${[...bt].join('|')}` : 'any type'}, now only ${[...ht].join('|')}${lost.length ? ` (${lost.join(', ')} no longer accepted)` : ''}.`,
        'head',
        hAt('type'),
      );
    }
    if (dir === 'output' && ht && bt && [...ht].some((t) => !bt.has(t))) {
      const gained = [...ht].filter((t) => !bt.has(t));
      this.add('output-type-changed', H.kw.get('type')!.origin.key, `${kl('type')}: may now be ${gained.join(', ')} (was ${[...bt].join('|')}); clients do not expect it.`, 'head', hAt('type'));
    }

    this.enumeration(B, H, dir);

    // Validation keywords on inputs.
    if (dir === 'input') {
      for (const [kw, rule] of Object.entries(LOWER)) {
        const bv = B.kw.get(kw)?.value;
        const hv = H.kw.get(kw)?.value;
        if (typeof hv === 'number' && (typeof bv !== 'number' || hv > bv))
          this.add(rule, H.kw.get(kw)!.origin.key, `${kl(kw)}: ${kw} ${bv === undefined ? 'added' : `raised from ${bv}`} to ${hv}; inputs valid before are refused.`, 'head', hAt(kw));
      }
      for (const [kw, rule] of Object.entries(UPPER)) {
        const bv = B.kw.get(kw)?.value;
        const hv = H.kw.get(kw)?.value;
        if (typeof hv === 'number' && (typeof bv !== 'number' || hv < bv))
          this.add(rule, H.kw.get(kw)!.origin.key, `${kl(kw)}: ${kw} ${bv === undefined ? 'added' : `lowered from ${bv}`} to ${hv}; inputs valid before are refused.`, 'head', hAt(kw));
      }
      const bm = B.kw.get('multipleOf')?.value;
      const hm = H.kw.get('multipleOf')?.value;
      if (typeof hm === 'number' && (typeof bm !== 'number' || bm % hm !== 0))
        this.add('input-range-narrowed', H.kw.get('multipleOf')!.origin.key, `${kl('multipleOf')}: multipleOf ${bm === undefined ? 'added' : `changed from ${bm}`} to ${hm}.`, 'head', hAt('multipleOf'));
      if (H.kw.get('uniqueItems')?.value === true && B.kw.get('uniqueItems')?.value !== true)
        this.add('input-items-narrowed', H.kw.get('uniqueItems')!.origin.key, `${kl('uniqueItems')}: uniqueItems added; lists with repeated items are refused.`, 'head', hAt('uniqueItems'));
      for (const [kw, rule] of [
        ['pattern', 'input-pattern-narrowed'],
        ['format', 'input-format-narrowed'],
      ] as const) {
        const bv = B.kw.get(kw)?.value;
        const hv = H.kw.get(kw)?.value;
        if (hv !== undefined && hv !== bv)
          this.add(rule, H.kw.get(kw)!.origin.key, `${kl(kw)}: ${kw} ${bv === undefined ? 'added' : `changed from ${show(bv)}`} to ${show(hv)}; inputs valid before may be refused.`, 'head', hAt(kw));
      }
      const bc = B.kw.get('const');
      const hc = H.kw.get('const');
      if (hc && (!bc || !same(bc.value, hc.value)))
        this.add('input-enum-narrowed', hc.origin.key, `${labelOf(hc.origin)}: now only accepts ${show(hc.value)}.`, 'head', hc.origin);
      // additionalProperties: absent means true, except on an operation's input object (false by default).
      const apOf = (n: Norm) => (n.kw.has('additionalProperties') ? n.kw.get('additionalProperties')!.value : topInput ? false : true);
      const bap = apOf(B);
      const hap = apOf(H);
      const rank = (v: unknown) => (v === false ? 0 : v === true || v === undefined ? 2 : 1);
      if (rank(hap) < rank(bap))
        this.add(
          'additional-properties-tightened',
          (H.kw.get('additionalProperties')?.origin ?? H.origin).key,
          `${kl('additionalProperties')}: additionalProperties ${show(bap)} -> ${show(hap)}; inputs with extra fields valid before are refused.`,
          'head',
          hAt('additionalProperties'),
        );
      if (rank(hap) === 1 && rank(bap) === 1) this.schema({ raw: bap, origin: B.kw.get('additionalProperties')!.origin }, { raw: hap, origin: H.kw.get('additionalProperties')!.origin }, dir);
    }

    // Properties.
    const names = [...new Set([...B.props.keys(), ...H.props.keys()])];
    for (const name of names) {
      const bp = B.props.get(name);
      const hp = H.props.get(name);
      const field = labelOf((hp ?? bp)!.origin);
      if (bp && !hp) {
        this.add(dir === 'input' ? 'input-field-removed' : 'output-field-removed', bp.origin.key, `${field} removed; clients ${dir === 'input' ? 'sending' : 'reading'} it break.`, 'base', bp.origin);
      } else if (!bp && hp) {
        if (dir === 'input') {
          if (H.required.has(name)) this.add('required-input-added', hp.origin.key, `${field} added as a required input; existing requests lack it.`, 'head', hp.origin);
          else this.add('input-field-added', hp.origin.key, `${field} added (optional).`, 'head', hp.origin);
        } else this.add('output-field-added', hp.origin.key, `${field} added to the output.`, 'head', hp.origin);
      } else if (bp && hp) {
        if (dir === 'input' && !B.required.has(name) && H.required.has(name))
          this.add('input-field-required', hp.origin.key, `${field} was optional and is now required; requests without it are refused.`, 'head', H.required.get(name)!);
        if (dir === 'output' && B.required.has(name) && !H.required.has(name))
          this.add('output-field-optional', hp.origin.key, `${field} was always present and is now optional.`, 'head', hp.origin);
        this.schema(bp, hp, dir);
      }
    }
    // A field required in head that exists nowhere as a property (e.g. required list changed alone).
    if (dir === 'input')
      for (const [name, origin] of H.required)
        if (!B.required.has(name) && !H.props.has(name) && !B.props.has(name))
          this.add('required-input-added', origin.key, `${label}.${name} is now required.`, 'head', origin);

    if (B.items && H.items) this.schema(B.items, H.items, dir);
    else if (dir === 'input' && B.items === null && H.items) {
      /* items added: constrains array contents */
      this.add('input-type-narrowed', H.items.origin.key, `${label}: items schema added; list contents are now constrained.`, 'head', H.items.origin);
    }

    // Options of oneOf/anyOf: pair equal ones, then by $ref name, then by position.
    if (B.options || H.options) {
      const bo = [...(B.options ?? [])];
      const ho = [...(H.options ?? [])];
      const pairs: [Ref, Ref][] = [];
      const take = (match: (x: Ref, y: Ref) => boolean) => {
        for (let i = 0; i < bo.length; i++) {
          const j = ho.findIndex((y) => match(bo[i], y));
          if (j >= 0) {
            pairs.push([bo[i], ho[j]]);
            bo.splice(i--, 1);
            ho.splice(j, 1);
          }
        }
      };
      take((x, y) => same(x.raw, y.raw));
      take((x, y) => isObj(x.raw) && isObj(y.raw) && typeof x.raw.$ref === 'string' && x.raw.$ref === y.raw.$ref);
      if (B.options && H.options) while (bo.length && ho.length) pairs.push([bo.shift()!, ho.shift()!]);
      for (const [x, y] of pairs) this.schema(x, y, dir);
      if (dir === 'input' && B.options && bo.length)
        for (const x of bo) this.add('input-type-narrowed', x.origin.key, `${labelOf(x.origin)}: option removed (${show(x.raw)}); inputs matching only it are refused.`, 'base', x.origin);
      if (dir === 'input' && !B.options && H.options)
        this.add('input-type-narrowed', H.options[0].origin.key, `${label}: now limited to ${H.options.length} oneOf/anyOf options.`, 'head', at(H.options[0].origin));
      if (dir === 'output' && H.options && ho.length)
        for (const y of ho) this.add('output-type-changed', y.origin.key, `${label}: new option ${y.origin.path.slice(-2).join('[')}] may now be returned.`, 'head', y.origin);
    }
  }

  private enumeration(B: Norm, H: Norm, dir: 'input' | 'output'): void {
    const be = B.kw.get('enum');
    const he = H.kw.get('enum');
    const label = labelOf((he ?? be)?.origin ?? H.origin).replace(/\.enum$/, '');
    if (be && he && Array.isArray(be.value) && Array.isArray(he.value)) {
      const bOpen = B.kw.get('x-svc-enum')?.value;
      const hOpen = H.kw.get('x-svc-enum')?.value;
      const subject = he.origin.key;
      if (bOpen !== undefined && hOpen !== undefined && bOpen !== hOpen)
        this.add('enum-openness-changed', subject, `${label}: enumeration was ${bOpen} and is now ${hOpen}; its openness is part of the contract.`, 'head', H.kw.get('x-svc-enum')!.origin);
      const bv = be.value as unknown[];
      const hv = he.value as unknown[];
      const removed = bv.filter((v) => !hv.some((w) => same(v, w)));
      const added = hv.filter((v) => !bv.some((w) => same(v, w)));
      if (bOpen === 'closed' && (removed.length || added.length)) {
        const parts = [added.length ? `added ${added.map(show).join(', ')}` : '', removed.length ? `removed ${removed.map(show).join(', ')}` : ''].filter(Boolean);
        this.add('closed-enum-changed', subject, `${label}: closed enumeration ${parts.join(' and ')}; a closed enumeration never changes within /v1.`, 'head', he.origin);
        return;
      }
      for (const v of removed) this.add('enum-value-removed', subject, `${label}: value ${show(v)} removed from the enumeration.`, 'head', he.origin);
      for (const v of added) this.add('enum-value-added', subject, `${label}: value ${show(v)} added to the open enumeration.`, 'head', he.origin);
    } else if (be && !he && dir === 'output') {
      this.add('output-type-changed', be.origin.key, `${label}: no longer limited to its enumeration ${show(be.value)}.`, 'base', be.origin);
    } else if (!be && he && dir === 'input') {
      this.add('input-enum-narrowed', he.origin.key, `${label}: now limited to ${show(he.value)}.`, 'head', he.origin);
    }
  }

  // -------------------------------------------------------------------------------------------

  run(): Finding[] {
    const bs = this.base.snapshot;
    const hs = this.head.snapshot;
    this.service(bs, hs);
    const bIds = Object.keys(bs.operations).sort();
    const hIds = Object.keys(hs.operations).sort();
    const headByRoute = new Map(hIds.map((id) => [routeShape(hs.operations[id].def.method, hs.operations[id].def.path), id]));
    const renamedTo = new Set<string>();
    const opOrigin = (id: string, ...p: JsonPath): Origin => ({ kind: 'op', key: id, path: p });
    const asOf = this.asOf(hs);
    for (const id of bIds) {
      if (id in hs.operations) continue;
      const def = bs.operations[id].def;
      const other = headByRoute.get(routeShape(def.method, def.path));
      this.currentOp = id;
      if (other && !(other in bs.operations)) {
        renamedTo.add(other);
        this.add('operation-renamed', id, `Operation ${id} (${def.method} ${def.path}) was renamed to ${other}; clients call it by its id and tool name.`, 'head', opOrigin(other, 'id'));
        const hd = hs.operations[other].def;
        if (def.mcp && hd.mcp) this.add('mcp-tool-renamed', id, `MCP tool ${def.mcp.name} is now ${hd.mcp.name}; agents configured with the old name break.`, 'head', opOrigin(other, 'mcp'));
        else if (def.mcp) this.add('mcp-tool-removed', id, `MCP tool ${def.mcp.name} was removed.`, 'head', opOrigin(other, 'mcp'));
        this.operation(id, other);
      } else if (def.deprecated && Date.parse(def.deprecated.sunset) <= asOf) {
        this.add('operation-withdrawn', id, `Deprecated operation ${id} was removed after its sunset (${def.deprecated.sunset}). List it under removed in the changelog.`, 'base', opOrigin(id, 'id'));
      } else {
        this.add(
          'operation-removed',
          id,
          `Operation ${id} (${def.method} ${def.path}) was removed${def.mcp ? ` with its MCP tool ${def.mcp.name}` : ''}${def.deprecated ? ` before its sunset ${def.deprecated.sunset}` : ''}.`,
          'base',
          opOrigin(id, 'id'),
        );
      }
    }
    for (const id of hIds) {
      this.currentOp = id;
      if (!(id in bs.operations)) {
        if (!renamedTo.has(id)) {
          const def = hs.operations[id].def;
          this.add('operation-added', id, `Operation ${id} (${def.method} ${def.path}${def.mcp ? `, MCP tool ${def.mcp.name}` : ''}) was added.`, 'head', opOrigin(id, 'id'));
        }
        continue;
      }
      this.operation(id, id);
    }
    this.currentOp = '';
    return this.findings();
  }

  /**
   * svc.yaml personalData.scope added, changed or removed: breaking. A format-1 base (a release from
   * before the member existed, when the runtime fixed the scope: pii:read) without it reports nothing
   * on a declaration: its snapshot cannot tell "none" from "before the member" (snapshot.ts SNAPSHOT_FORMAT).
   */
  private personalData(bs: Snapshot, hs: Snapshot): void {
    const before = bs.service.personalData?.scope;
    const after = hs.service.personalData?.scope;
    const baseKnows = bs.snapshotFormat >= 2 || before !== undefined;
    if (!baseKnows || before === after) return;
    const was = before === undefined ? 'no scope gated personal data' : `personalData.scope was ${before}`;
    const now = after === undefined ? 'no scope gates personal data any more' : `credentials without ${after} lose personal data`;
    const origin: Origin = { kind: 'svc', key: '', path: after === undefined ? ['personalData'] : ['personalData', 'scope'] };
    this.add('personal-data-scope-changed', 'personalData', `svc.yaml ${was}; now ${now}.`, after === undefined ? 'base' : 'head', origin);
  }

  /** svc.yaml features turned on or off: breaking (compared when the base records them: releases since features existed). */
  private features(bs: Snapshot, hs: Snapshot): void {
    const base = bs.service.features as ServiceFeatures | undefined;
    if (!base) return;
    const effects: Record<keyof ServiceFeatures, [on: string, off: string]> = {
      clientTenancy: ['records and credentials are bound to clients: a credential reaches only its clients', 'client administrators and client-bound credentials are no longer served'],
      approvals: ['Tier 2 and 3 commands answer 202 proposed and wait for a person', 'Tier 2 and 3 commands run at once instead of waiting for approval'],
    };
    for (const name of ['clientTenancy', 'approvals'] as const) {
      const before = base[name] === true;
      const after = hs.service.features[name] === true;
      if (before === after) continue;
      const origin: Origin = { kind: 'svc', key: '', path: ['features', name] };
      this.add('feature-changed', `features.${name}`, `svc.yaml features.${name} turned ${after ? 'on' : 'off'}: ${effects[name][after ? 0 : 1]}.`, after ? 'head' : 'base', origin);
    }
  }

  /** The moment the head version takes effect: its changelog date, else now. */
  private asOf(hs: Snapshot): number {
    const entry = hs.changelog.find((c) => c.version === hs.contractVersion);
    const t = entry ? Date.parse(entry.date) : NaN;
    return Number.isNaN(t) ? Date.now() : t;
  }

  private service(bs: Snapshot, hs: Snapshot): void {
    const svc = (...p: JsonPath): Origin => ({ kind: 'svc', key: '', path: p });
    // The tool prefix names every MCP tool, the header every answer's version: a change of either breaks clients.
    const named = [
      ['mcpToolPrefix', 'mcp-tool-prefix-changed', DEFAULT_MCP_TOOL_PREFIX, 'every MCP tool is renamed (clients call tools by name)'],
      ['apiVersionHeader', 'api-version-header-changed', DEFAULT_API_VERSION_HEADER, 'the header that carries the API version in every answer is renamed'],
    ] as const;
    for (const [key, rule, fallback, effect] of named) {
      const before = bs.service[key] ?? fallback;
      const after = hs.service[key] ?? fallback;
      if (before !== after) this.add(rule, key, `svc.yaml ${key} changed from ${before} to ${after}: ${effect}.`, hs.service[key] !== undefined ? 'head' : 'base', svc(key));
    }
    this.personalData(bs, hs);
    this.features(bs, hs);
    bs.service.scopes.forEach((s, i) => {
      if (!hs.service.scopes.includes(s)) this.add('scope-removed', s, `Scope ${s} was removed; credentials granted it lose access.`, 'base', svc('scopes', i, 'name'));
    });
    hs.service.scopes.forEach((s, i) => {
      if (!bs.service.scopes.includes(s)) this.add('scope-added', s, `Scope ${s} was added.`, 'head', svc('scopes', i, 'name'));
    });
    bs.service.eventTypes.forEach((e, i) => {
      if (!hs.service.eventTypes.includes(e)) this.add('event-type-removed', e, `Webhook event type ${e} was removed; subscribers stop receiving it.`, 'base', svc('eventTypes', i, 'name'));
    });
    hs.service.eventTypes.forEach((e, i) => {
      if (!bs.service.eventTypes.includes(e)) this.add('event-type-added', e, `Webhook event type ${e} was added.`, 'head', svc('eventTypes', i, 'name'));
    });
    hs.service.versions.forEach((v, i) => {
      const old = bs.service.versions.find((w) => w.version === v.version);
      if (v.status === 'deprecated' && (!old || old.status !== 'deprecated' || old.sunset !== v.sunset))
        this.add('version-deprecated', v.version, `Version ${v.version} is deprecated, sunset ${v.sunset ?? 'not set'}.`, 'head', svc('versions', i, 'status'));
    });
    for (const [code, p] of Object.entries(bs.service.problems)) {
      const q = hs.service.problems[code];
      if (!q) this.add('problem-code-removed', code, `Problem code ${code} was removed from svc.yaml.`, 'base', svc('problems', code));
      else if (p.status !== q.status || p.retry !== q.retry)
        this.add(
          'problem-status-changed',
          code,
          `Problem ${code} changed from ${p.status}/${p.retry} to ${q.status}/${q.retry}; clients branch on them.`,
          'head',
          svc('problems', code, p.status !== q.status ? 'status' : 'retry'),
        );
    }
    for (const code of Object.keys(hs.service.problems))
      if (!(code in bs.service.problems)) this.add('problem-code-added', code, `Problem code ${code} was added to svc.yaml.`, 'head', svc('problems', code));
    this.dynamicTools(bs, hs);
  }

  /** The dynamic MCP mode's meta-tools: names, roles, annotations and input schemas are published surface. */
  private dynamicTools(bs: Snapshot, hs: Snapshot): void {
    // Snapshots recorded before the dynamic mode existed have no mcpDynamicTools.
    const bt = bs.service.mcpDynamicTools ?? [];
    const ht = hs.service.mcpDynamicTools ?? [];
    const tool = (name: string, ...p: JsonPath): Origin => ({ kind: 'tool', key: name, path: p });
    for (const b of bt) {
      const h = ht.find((t) => t.name === b.name);
      if (!h) {
        this.add('mcp-meta-tool-removed', b.name, `Meta-tool ${b.name} of the dynamic MCP mode was removed (or renamed); agents calling it break.`, 'base', tool(b.name, 'name'));
        continue;
      }
      if (b.role !== h.role) this.add('mcp-meta-tool-role-changed', h.name, `Meta-tool ${h.name}: role ${b.role} -> ${h.role}; agents calling it get another behaviour.`, 'head', tool(h.name, 'role'));
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
        if (b.annotations[k] !== h.annotations[k]) this.add('mcp-annotations-changed', h.name, `Meta-tool ${h.name}: ${k} ${b.annotations[k]} -> ${h.annotations[k]}.`, 'head', tool(h.name, 'role'));
      this.schema({ raw: b.inputSchema, origin: tool(b.name, 'input') }, { raw: h.inputSchema, origin: tool(h.name, 'input') }, 'input', true);
    }
    for (const h of ht)
      if (!bt.some((b) => b.name === h.name)) this.add('mcp-meta-tool-added', h.name, `Meta-tool ${h.name} (${h.role}) was added to the dynamic MCP mode.`, 'head', tool(h.name, 'name'));
  }

  private operation(bid: string, hid: string): void {
    const b = this.base.snapshot.operations[bid];
    const h = this.head.snapshot.operations[hid];
    const bd = b.def;
    const hd = h.def;
    const o = (...p: JsonPath): Origin => ({ kind: 'op', key: hid, path: p });
    const bo = (...p: JsonPath): Origin => ({ kind: 'op', key: bid, path: p });
    const subject = hid;
    if (bd.kind !== hd.kind) this.add('operation-kind-changed', subject, `${hid} was a ${bd.kind} and is now a ${hd.kind}.`, 'head', o('kind'));
    if (bd.method !== hd.method) this.add('http-method-changed', subject, `${hid}: HTTP method ${bd.method} -> ${hd.method}.`, 'head', o('http', 'method'));
    if (bd.path !== hd.path) this.add('http-path-changed', subject, `${hid}: path ${bd.path} -> ${hd.path}.`, 'head', o('http', 'path'));
    if (bd.successStatus !== hd.successStatus) this.add('success-status-changed', subject, `${hid}: success status ${bd.successStatus} -> ${hd.successStatus}.`, 'head', o('http', 'status'));
    if (bd.scope !== hd.scope) this.add('operation-scope-changed', subject, `${hid}: scope ${bd.scope ?? 'none'} -> ${hd.scope ?? 'none'}; credentials that could call it may no longer.`, 'head', o('scope'));
    if (bd.tier !== hd.tier) this.add('operation-tier-changed', subject, `${hid}: tier ${bd.tier} -> ${hd.tier}; ${bd.tier === 1 ? 'callers that expected it to run get a 202 proposal' : 'its outcome changes'}.`, 'head', o('tier'));
    for (const a of bd.audience) if (!hd.audience.includes(a)) this.add('audience-narrowed', subject, `${hid}: principal ${a} may no longer call it.`, 'head', o('audience'));
    for (const a of hd.audience) if (!bd.audience.includes(a)) this.add('audience-widened', subject, `${hid}: principal ${a} may now call it.`, 'head', o('audience'));
    if (hd.idempotency === 'required' && bd.idempotency !== 'required') this.add('idempotency-required', subject, `${hid}: Idempotency-Key is now required (was ${bd.idempotency}).`, 'head', o('idempotency'));
    if (hd.ifMatch === 'required' && bd.ifMatch !== 'required') this.add('if-match-required', subject, `${hid}: If-Match is now required.`, 'head', o('ifMatch'));
    if (bd.paged !== hd.paged || bd.stream !== hd.stream)
      this.add('paging-changed', subject, `${hid}: ${bd.paged !== hd.paged ? `paged ${bd.paged} -> ${hd.paged}` : `stream ${bd.stream} -> ${hd.stream}`}.`, 'head', o(hd.paged ? 'page' : 'output'));
    for (const e of bd.emits) if (!hd.emits.includes(e)) this.add('event-emission-removed', subject, `${hid} no longer emits ${e}.`, 'head', o('emits'));
    for (const e of hd.emits) if (!bd.emits.includes(e)) this.add('event-emission-added', subject, `${hid} now emits ${e}.`, 'head', o('emits'));
    const hErrors = (h.contract.errors as string[] | undefined) ?? [];
    for (const code of bd.problems)
      if (!hd.problems.includes(code) && code in this.head.snapshot.service.problems)
        this.add('problem-code-removed', subject, `${hid} no longer answers problem ${code}; clients that handle it see a different answer.`, 'head', o(hErrors.length ? 'errors' : 'id'));
    hErrors.forEach((code, i) => {
      if (!bd.problems.includes(code)) this.add('operation-problem-added', subject, `${hid} now declares problem ${code}, which it could not answer before.`, 'head', o('errors', i));
    });
    // MCP.
    if (bd.mcp && !hd.mcp && bid === hid) this.add('mcp-tool-removed', subject, `MCP tool ${bd.mcp.name} was removed (${hd.mcpReason ?? 'no reason'}).`, 'head', o('mcp'));
    if (!bd.mcp && hd.mcp) this.add('mcp-tool-added', subject, `${hid} is now the MCP tool ${hd.mcp.name}.`, 'head', o('mcp'));
    if (bd.mcp && hd.mcp) {
      if (bd.mcp.name !== hd.mcp.name && bid === hid) this.add('mcp-tool-renamed', subject, `MCP tool ${bd.mcp.name} is now ${hd.mcp.name}.`, 'head', o('mcp'));
      const ba = bd.mcp.annotations;
      const ha = hd.mcp.annotations;
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
        if (ba[k] !== ha[k]) this.add('mcp-annotations-changed', subject, `MCP tool ${hd.mcp.name}: ${k} ${ba[k]} -> ${ha[k]}.`, 'head', o('mcp'));
      const bArgs = Object.keys((bd.mcp.inputSchema.properties as Obj) ?? {});
      const hArgs = Object.keys((hd.mcp.inputSchema.properties as Obj) ?? {});
      for (const arg of bArgs)
        if (!hArgs.includes(arg) && ['idempotencyKey', 'ifMatch', 'dryRun'].includes(arg))
          this.add('mcp-input-narrowed', subject, `MCP tool ${hd.mcp.name} no longer takes the argument ${arg}; agents sending it are refused.`, 'head', o(arg === 'ifMatch' ? 'ifMatch' : arg === 'idempotencyKey' ? 'idempotency' : 'kind'));
    }
    // Deprecation.
    if (!same(bd.deprecated, hd.deprecated) && hd.deprecated)
      this.add('operation-deprecated', subject, `${hid} is deprecated since ${hd.deprecated.since}, sunset ${hd.deprecated.sunset}, successor ${hd.deprecated.successor}.`, 'head', o('deprecated'));

    // Schemas: input as REST and MCP take it; output/result/page.
    const bIn: Ref = { raw: b.contract.input ?? {}, origin: bo('input') };
    const hIn: Ref = { raw: h.contract.input ?? {}, origin: o('input') };
    this.schema(bIn, hIn, 'input', true);
    const outKey = (c: Obj) => (['result', 'page', 'output'] as const).find((k) => k in c);
    const bk = outKey(b.contract);
    const hk = outKey(h.contract);
    if (bk && hk) this.schema({ raw: b.contract[bk], origin: bo(bk) }, { raw: h.contract[hk], origin: o(hk) }, 'output');
  }
}

/** Accepts a Side or a bare snapshot (whose locations then name the snapshot). */
function toSide(x: Side | Snapshot, label: string): Side {
  if ('snapshot' in x) return x;
  return { label, snapshot: x, locate: () => null };
}

/** Every difference between base and head, classified. */
export function diffContracts(base: Side | Snapshot, head: Side | Snapshot): Finding[] {
  return new Differ(toSide(base, 'base'), toSide(head, 'head')).run();
}
