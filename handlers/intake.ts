// intake.*: onboarding records made from a template, set field by field and finalized.
// Field states empty -> draft -> final; record states draft -> finalized (contract/schemas/intake.yaml).
// Every write locks the record row (SELECT … FOR UPDATE) before reading its state, so set_field
// cannot race finalize. Tier 2 bodies (create, reopen_field, finalize) run as a pre-flight at
// proposal time and again on approval: every check lives in the body.
import { and, eq, getTableColumns, type SQL } from 'drizzle-orm';
import { files } from '../runtime/data/schema.ts';
import { intakeRecords, projects } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newDomainId } from './data/ids.ts';
import type { SubjectLoader } from '../runtime/pipeline/approval-subjects.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound, ProblemError, type FieldError } from '../runtime/problem-error.ts';
import type { IntakeHandlers } from '../generated/handlers/intake.ts';
import type { components } from '../generated/types.ts';
import { INTAKE_TEMPLATES, INTAKE_TEXT_MAX, type IntakeFieldDef } from './intake-templates.ts';
import { iso } from './mappers/time.ts';
import { actorName, checkDate, invalidTransition, requireClient, validationFailed } from './shared.ts';

/** Loads an approval's `intake` subject: its client (handlers/index.ts hands it to the registry). */
export const intakeSubject: SubjectLoader = async (db, id) => {
  const [row] = await db.select({ clientId: intakeRecords.clientId }).from(intakeRecords).where(eq(intakeRecords.id, id)).limit(1);
  return row;
};

type Schemas = components['schemas'];
export type IntakeRecord = Schemas['IntakeRecord'];
type IntakeField = Schemas['IntakeField'];
type FieldValue = Schemas['IntakeFieldValue'];
type Row = typeof intakeRecords.$inferSelect;

function fieldsOf(row: Row): IntakeField[] {
  return row.fields as IntakeField[];
}

export function toIntakeRecord(row: Row): IntakeRecord {
  return {
    id: row.id,
    clientId: row.clientId,
    projectId: row.projectId,
    title: row.title,
    template: row.template,
    status: row.status as IntakeRecord['status'],
    fields: fieldsOf(row),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    finalizedAt: iso(row.finalizedAt),
  };
}

/** The record if the caller's client scope reaches it (404 otherwise); locked FOR UPDATE for writes. */
async function visibleRecord(ctx: HandlerContext, id: string, lock: boolean): Promise<Row> {
  const q = ctx.db.select().from(intakeRecords).where(eq(intakeRecords.id, id));
  const [row] = lock ? await q.for('update') : await q;
  if (!row || !ctx.policy.canReadClient(row.clientId)) throw notFound('Intake record');
  return row;
}

/** A value checked against its field's type; the error names `pointer`. Null is always allowed (it clears). */
async function checkValue(ctx: HandlerContext, clientId: string, def: Pick<IntakeFieldDef, 'type' | 'choices'>, value: FieldValue, pointer: string): Promise<FieldError | null> {
  if (value === null) return null;
  switch (def.type) {
    case 'text':
      if (typeof value !== 'string') return { pointer, message: 'must be a string (text field)' };
      if (value.length > INTAKE_TEXT_MAX) return { pointer, message: `must be at most ${INTAKE_TEXT_MAX} characters` };
      return null;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : { pointer, message: 'must be a number (number field)' };
    case 'boolean':
      return typeof value === 'boolean' ? null : { pointer, message: 'must be true or false (boolean field)' };
    case 'date':
      if (typeof value !== 'string') return { pointer, message: 'must be a calendar date (YYYY-MM-DD)' };
      try {
        checkDate(value, pointer);
        return null;
      } catch (e) {
        if (e instanceof ProblemError) return e.errors[0] ?? { pointer, message: 'must be a calendar date (YYYY-MM-DD)' };
        throw e;
      }
    case 'choice':
      return typeof value === 'string' && (def.choices ?? []).includes(value) ? null : { pointer, message: `must be one of ${(def.choices ?? []).join(', ')}` };
    case 'file': {
      if (typeof value !== 'string') return { pointer, message: "must be a file id (fil_…)" };
      const [file] = await ctx.db.select({ clientId: files.clientId, status: files.status }).from(files).where(eq(files.id, value));
      if (!file || file.clientId !== clientId) return { pointer, message: `no file ${value} of this record's client` };
      if (file.status === 'rejected') return { pointer, message: `file ${value} was rejected by the scan` };
      return null;
    }
    default:
      return { pointer, message: `field type ${String(def.type)} is not supported` };
  }
}

async function actor(ctx: HandlerContext): Promise<IntakeField['updatedBy']> {
  return { kind: ctx.principal.kind, id: ctx.principal.id, name: await actorName(ctx.db, ctx.principal.id) };
}

async function list(input: Schemas['IntakeListInput'], ctx: HandlerContext): Promise<Page<IntakeRecord>> {
  const { clientId, projectId, status } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startPage(ctx.db, input, 'intake.list', { clientId, projectId, status });
  const filters: (SQL | undefined)[] = [
    ctx.policy.clientWhere(intakeRecords.clientId),
    clientId !== undefined ? eq(intakeRecords.clientId, clientId) : undefined,
    projectId !== undefined ? eq(intakeRecords.projectId, projectId) : undefined,
    status !== undefined ? eq(intakeRecords.status, status) : undefined,
    page.after(intakeRecords.createdAt, intakeRecords.id),
  ];
  const rows = await ctx.db
    .select({ ...getTableColumns(intakeRecords), pageKey: pageKeyColumn(intakeRecords.createdAt) })
    .from(intakeRecords)
    .where(and(...filters))
    .orderBy(...page.orderBy(intakeRecords.createdAt, intakeRecords.id))
    .limit(page.fetch);
  return page.finish(rows, toIntakeRecord);
}

async function get(input: Schemas['IntakeGetInput'], ctx: HandlerContext): Promise<IntakeRecord> {
  return toIntakeRecord(await visibleRecord(ctx, input.intake_id, false));
}

async function create(input: Schemas['IntakeCreateInput'], ctx: HandlerContext): Promise<IntakeRecord> {
  ctx.policy.assertClientInScope(input.clientId);
  await requireClient(ctx.db, input.clientId);
  const errors: FieldError[] = [];
  if (input.projectId !== undefined) {
    const [project] = await ctx.db.select({ clientId: projects.clientId }).from(projects).where(eq(projects.id, input.projectId));
    if (!project || project.clientId !== input.clientId) errors.push({ pointer: '/projectId', message: `no project ${input.projectId} of client ${input.clientId}` });
  }
  const template = INTAKE_TEMPLATES[input.template];
  if (!template) {
    errors.push({ pointer: '/template', message: `unknown template; known: ${Object.keys(INTAKE_TEMPLATES).join(', ')}` });
    throw validationFailed(errors);
  }
  const values = input.values ?? {};
  const by = await actor(ctx);
  for (const key of Object.keys(values)) {
    if (!template.some((f) => f.key === key)) errors.push({ pointer: `/values/${key}`, message: `template ${input.template} has no field ${key}` });
  }
  const fields: IntakeField[] = [];
  for (const def of template) {
    const value = Object.hasOwn(values, def.key) ? (values[def.key] ?? null) : null;
    const problem = await checkValue(ctx, input.clientId, def, value, `/values/${def.key}`);
    if (problem) errors.push(problem);
    const set = value !== null;
    fields.push({
      key: def.key,
      label: def.label,
      type: def.type,
      required: def.required,
      ...(def.choices ? { choices: [...def.choices] } : {}),
      value,
      status: set ? 'draft' : 'empty',
      source: 'manual',
      updatedAt: set ? iso(ctx.now) : null,
      updatedBy: set ? by : null,
    });
  }
  if (errors.length > 0) throw validationFailed(errors);
  const [row] = await ctx.db
    .insert(intakeRecords)
    .values({
      id: newDomainId('intake'),
      clientId: input.clientId,
      projectId: input.projectId ?? null,
      title: input.title,
      template: input.template,
      status: 'draft',
      fields,
      version: 1,
      createdByKind: ctx.principal.kind,
      createdById: ctx.principal.id,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  return toIntakeRecord(row!);
}

function fieldIndex(row: Row, key: string): number {
  const i = fieldsOf(row).findIndex((f) => f.key === key);
  if (i < 0) throw notFound(`Field ${key} of intake record ${row.id}`);
  return i;
}

async function save(ctx: HandlerContext, row: Row, changes: Partial<typeof intakeRecords.$inferInsert>): Promise<Row> {
  const [saved] = await ctx.db
    .update(intakeRecords)
    .set({ ...changes, version: row.version + 1, updatedAt: ctx.now })
    .where(eq(intakeRecords.id, row.id))
    .returning();
  return saved!;
}

async function setField(input: Schemas['IntakeDraftSetFieldInput'], ctx: HandlerContext): Promise<IntakeRecord> {
  const row = await visibleRecord(ctx, input.intake_id, true);
  const i = fieldIndex(row, input.field_key);
  if (row.status === 'finalized') throw invalidTransition('The record is finalized; reopen the field (intake.reopen_field) to change it.');
  const fields = fieldsOf(row).map((f) => ({ ...f }));
  const field = fields[i]!;
  if (field.status === 'final') throw invalidTransition(`Field ${field.key} is final; reopen it (intake.reopen_field) to change it.`);
  const problem = await checkValue(ctx, row.clientId, { type: field.type as IntakeFieldDef['type'], choices: field.choices }, input.value, '/value');
  if (problem) throw validationFailed([problem]);
  const source = input.source ?? 'manual';
  const status = input.value === null ? 'empty' : 'draft';
  // The same value from the same source leaves the same state: nothing is written (PUT is idempotent).
  if (field.value === input.value && field.status === status && (status === 'empty' || field.source === source)) return toIntakeRecord(row);
  fields[i] = { ...field, value: input.value, status, source, updatedAt: iso(ctx.now), updatedBy: await actor(ctx) };
  return toIntakeRecord(await save(ctx, row, { fields }));
}

async function reopenField(input: Schemas['IntakeReopenFieldInput'], ctx: HandlerContext): Promise<IntakeRecord> {
  const row = await visibleRecord(ctx, input.intake_id, true);
  const i = fieldIndex(row, input.field_key);
  const fields = fieldsOf(row).map((f) => ({ ...f }));
  const field = fields[i]!;
  if (field.status !== 'final') throw invalidTransition(`Field ${field.key} is ${field.status}, not final; only a final field can be reopened.`);
  fields[i] = { ...field, status: 'draft', updatedAt: iso(ctx.now), updatedBy: await actor(ctx) };
  return toIntakeRecord(await save(ctx, row, { fields, status: 'draft', finalizedAt: null }));
}

async function finalize(input: Schemas['IntakeFinalizeInput'], ctx: HandlerContext): Promise<IntakeRecord> {
  const row = await visibleRecord(ctx, input.intake_id, true);
  // Finalizing a finalized record changes nothing and emits nothing.
  if (row.status === 'finalized') return toIntakeRecord(row);
  const missing = fieldsOf(row).filter((f) => f.required && f.value === null).map((f) => f.key);
  if (missing.length > 0) {
    throw new ProblemError('invalid_transition', `Required fields without a value: ${missing.join(', ')}.`, { extra: { missingFields: missing } });
  }
  const fields = fieldsOf(row).map((f) => (f.value === null ? { ...f } : { ...f, status: 'final' as const }));
  const saved = toIntakeRecord(await save(ctx, row, { fields, status: 'finalized', finalizedAt: ctx.now }));
  await ctx.emit('intake.finalized', { clientId: saved.clientId, subjectId: saved.id }, { ...saved });
  return saved;
}

export const intakeHandlers = {
  'intake.list': list,
  'intake.get': get,
  'intake.create': create,
  'intake.draft.set_field': setField,
  'intake.reopen_field': reopenField,
  'intake.finalize': finalize,
} satisfies IntakeHandlers;
