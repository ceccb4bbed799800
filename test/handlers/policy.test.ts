// Visibility rules 1-6 for each principal kind, as predicates and as SQL against a real database.
import { and, asc } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../runtime/data/client.ts';
import { clients } from '../../runtime/data/schema.ts';
import { tasks } from '../../handlers/data/schema.ts';
import { allowedByRole, type OwnerView } from '../../runtime/auth/principal.ts';
import { Policy } from '../../runtime/auth/policy.ts';
import { service } from '../../generated/registry.ts';
import { installContractFacts } from '../../runtime/contract-facts.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { freshDatabase } from '../support/db.ts';
import { ALL_SCOPES, principal } from './context.ts';

const A = 'cli_a';
const B = 'cli_b';

const operatorAll = new Policy(principal('operator', 'usr_all', { all: true, clientIds: [] }));
const operatorEmpty = new Policy(principal('operator', 'usr_empty', { all: false, clientIds: [] }));
const operatorA = new Policy(principal('operator', 'usr_opa', { all: false, clientIds: [A] }));
const clientAdminA = new Policy(principal('client_admin', 'usr_ca', { all: false, clientIds: [A] }));
const serviceA = new Policy(principal('service_account', 'usr_owner', { all: false, clientIds: [A] }));
// Unbound API keys: operator principals acting for their owner, never widened (DESIGN.md).
const unboundKey = (clientScope: { all: boolean; clientIds: string[] }) =>
  new Policy({ ...principal('operator', 'usr_keyowner', clientScope), loginMethod: 'api_key', oauthClientId: null });
const keyAll = unboundKey({ all: true, clientIds: [] });
const keyA = unboundKey({ all: false, clientIds: [A] });
const keyEmpty = unboundKey({ all: false, clientIds: [] });

const internal = { clientId: null };
const taskA = { clientId: A };
const taskB = { clientId: B };

function expectNotFound(fn: () => void) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProblemError);
    expect((e as ProblemError).code).toBe('not_found');
    return;
  }
  throw new Error('expected not_found');
}

describe('Policy predicates', () => {
  it('rule 1: an operator reads internal tasks whatever its client scope, an empty one included', () => {
    for (const p of [operatorAll, operatorEmpty, operatorA]) expect(p.canReadRecord(internal)).toBe(true);
    expect(operatorEmpty.canReadRecord(taskA)).toBe(false);
    expect(operatorA.canReadRecord(taskA)).toBe(true);
    expect(operatorA.canReadRecord(taskB)).toBe(false);
    expect(operatorAll.canReadRecord(taskB)).toBe(true);
  });

  it('rule 2: an operator writes internal tasks whatever its scope; client-bound writes keep the scope', () => {
    for (const p of [operatorAll, operatorEmpty, operatorA]) {
      expect(p.canWriteInternal()).toBe(true);
      expect(p.canWriteRecord(internal)).toBe(true);
    }
    expect(operatorEmpty.canWriteRecord(taskA)).toBe(false);
    expect(operatorA.canWriteRecord(taskA)).toBe(true);
  });

  it('rule 3: an operator reads every crm/pipeline row whatever its scope; others keep their scope', () => {
    for (const p of [operatorAll, operatorEmpty, operatorA]) {
      expect(p.canReadWidenedRow(taskB)).toBe(true);
      expect(p.canReadWidenedRow(internal)).toBe(true);
      expect(() => p.assertWidenedReadClientFilter(B)).not.toThrow();
    }
    for (const p of [clientAdminA, serviceA]) {
      expect(p.canReadWidenedRow(taskA)).toBe(true);
      expect(p.canReadWidenedRow(taskB)).toBe(false);
      expect(p.canReadWidenedRow(internal)).toBe(false);
      expectNotFound(() => p.assertWidenedReadClientFilter(B));
    }
  });

  it('rule 4: client_admin and service_account never see internal tasks and keep their client scope', () => {
    for (const p of [clientAdminA, serviceA]) {
      expect(p.canReadRecord(internal)).toBe(false);
      expect(p.canWriteInternal()).toBe(false);
      expect(p.canWriteRecord(internal)).toBe(false);
      expect(p.canReadRecord(taskA)).toBe(true);
      expect(p.canReadRecord(taskB)).toBe(false);
      expectNotFound(() => p.assertRecordVisible(internal, 'Task'));
      expectNotFound(() => p.assertRecordWritable(taskB, 'Task'));
    }
  });

  it('an unbound API key is an operator principal but never widened: rules 1-3 do not apply, its reach is its owner\'s', () => {
    for (const p of [keyAll, keyA, keyEmpty]) {
      expect(p.isOperator).toBe(true);
      expect(p.widened).toBe(false);
      expect(p.canReadRecord(internal)).toBe(false);
      expect(p.canWriteInternal()).toBe(false);
      expect(p.canReadWidenedRow(internal)).toBe(false);
      expectNotFound(() => p.assertRecordVisible(internal, 'Task'));
    }
    for (const p of [operatorAll, operatorEmpty, operatorA]) expect(p.widened).toBe(true);
    for (const p of [clientAdminA, serviceA]) expect(p.widened).toBe(false);
    expect(keyAll.canReadRecord(taskB)).toBe(true);
    expect(keyAll.canReadWidenedRow(taskB)).toBe(true);
    expect(keyA.canReadRecord(taskA)).toBe(true);
    expect(keyA.canReadRecord(taskB)).toBe(false);
    expect(keyA.canReadWidenedRow(taskB)).toBe(false);
    expectNotFound(() => keyA.assertWidenedReadClientFilter(B));
    expectNotFound(() => keyEmpty.assertWidenedReadClientFilter(A));
    expect(() => keyA.assertWidenedReadClientFilter(A)).not.toThrow();
  });

  it('rule 5: other resources keep the client scope (operators included)', () => {
    expect(operatorAll.canReadClient(B)).toBe(true);
    expect(operatorEmpty.canReadClient(A)).toBe(false);
    expect(operatorA.canReadClient(A)).toBe(true);
    expect(operatorA.canReadClient(B)).toBe(false);
    expect(clientAdminA.canReadClient(A)).toBe(true);
    expect(serviceA.canReadClient(B)).toBe(false);
    expect(operatorA.canReadClient(null)).toBe(false);
    expectNotFound(() => operatorEmpty.assertClientInScope(A));
    expectNotFound(() => serviceA.assertClientInScope(B));
    expect(() => clientAdminA.assertClientInScope(A)).not.toThrow();
  });

  it('rule 5: contact personal data is redacted without pii:read', () => {
    const contact = { id: 'con_1', name: 'Ada', email: 'ada@example.com', phone: '+1', jobTitle: 'CTO', redacted: false };
    const withPii = new Policy(principal('operator', 'u', { all: true, clientIds: [] }, ['crm:read', 'pii:read']));
    const without = new Policy(principal('operator', 'u', { all: true, clientIds: [] }, ['crm:read']));
    expect(withPii.redactPersonalData(contact)).toEqual({ ...contact, redacted: false });
    expect(without.redactPersonalData(contact)).toEqual({ ...contact, name: null, email: null, phone: null, redacted: true });
    expect(contact.name).toBe('Ada');
  });

  it("rule 5: the scope is the contract's personalData.scope; a contract that declares none gates personal data with none", () => {
    const contact = { id: 'con_1', name: 'Ada', email: 'ada@example.com', phone: '+1' };
    const withPii = new Policy(principal('operator', 'u', { all: true, clientIds: [] }, ['crm:read', 'pii:read']));
    const withOther = new Policy(principal('operator', 'u', { all: true, clientIds: [] }, ['crm:read', 'people:see']));
    try {
      installContractFacts({ ...service, personalData: { scope: 'people:see' } });
      expect(withOther.redactPersonalData(contact).redacted).toBe(false);
      expect(withPii.redactPersonalData(contact)).toMatchObject({ name: null, email: null, phone: null, redacted: true });
      const { personalData: _gate, ...undeclared } = service;
      installContractFacts(undeclared);
      expect(new Policy(principal('operator', 'u', { all: true, clientIds: [] }, [])).redactPersonalData(contact)).toMatchObject({ name: 'Ada', redacted: false });
    } finally {
      installContractFacts(service);
    }
    expect(withOther.redactPersonalData(contact).redacted).toBe(true);
  });

  it('rule 6: staff labels hold every scope, viewer none, a membership role itself when it is a scope', () => {
    const rules = { scopes: ALL_SCOPES, roleScopes: service.roleScopes };
    const owner = (kind: OwnerView['kind'], role: string): OwnerView =>
      kind === 'client_admin'
        ? { id: 'u', kind, role: 'member', allClients: false, disabled: false, memberships: [{ clientId: A, role }] }
        : { id: 'u', kind, role, allClients: true, disabled: false, memberships: [] };
    const scopesAllowedByRole = (role: string, _all: readonly string[], kind: OwnerView['kind']) => [...allowedByRole(owner(kind, role), rules)];
    for (const label of ['owner', 'admin', 'operator']) expect(scopesAllowedByRole(label, ALL_SCOPES, 'operator')).toEqual(ALL_SCOPES);
    expect(scopesAllowedByRole('viewer', ALL_SCOPES, 'operator')).toEqual([]);
    expect(scopesAllowedByRole('viewer', ALL_SCOPES, 'operator')).not.toContain('pii:read');
    expect(scopesAllowedByRole('tasks:read', ALL_SCOPES, 'client_admin')).toEqual(['tasks:read']);
    expect(scopesAllowedByRole('manager', ALL_SCOPES, 'client_admin')).toEqual([]);
    const viewer = new Policy(principal('operator', 'u', { all: true, clientIds: [] }, [], 'viewer'));
    expect(viewer.canReadPersonalData).toBe(false);
    expect(viewer.redactPersonalData({ name: 'x', email: 'y', phone: 'z' }).redacted).toBe(true);
  });
});

describe('Policy SQL', () => {
  let database: Database;
  beforeAll(async () => {
    database = await freshDatabase();
    const base = { status: 'open' as const, priority: 'normal' as const, createdBy: 'usr_x' };
    await database.db.insert(clients).values([A, B].map((id) => ({ id, name: id, status: 'active' as const })));
    await database.db.insert(tasks).values([
      { id: 't_int', clientId: null, title: 'internal', ...base },
      { id: 't_a', clientId: A, title: 'a', ...base },
      { id: 't_b', clientId: B, title: 'b', ...base },
    ]);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  async function taskIds(where: ReturnType<Policy['recordWhere']>): Promise<string[]> {
    const rows = await database.db.select({ id: tasks.id }).from(tasks).where(and(where)).orderBy(asc(tasks.id));
    return rows.map((r) => r.id);
  }

  it('recordWhere applies rules 1 and 4', async () => {
    expect(await taskIds(operatorAll.recordWhere(tasks.clientId))).toEqual(['t_a', 't_b', 't_int']);
    expect(await taskIds(operatorEmpty.recordWhere(tasks.clientId))).toEqual(['t_int']);
    expect(await taskIds(operatorA.recordWhere(tasks.clientId))).toEqual(['t_a', 't_int']);
    expect(await taskIds(clientAdminA.recordWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(serviceA.recordWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(keyAll.recordWhere(tasks.clientId))).toEqual(['t_a', 't_b']);
    expect(await taskIds(keyA.recordWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(keyEmpty.recordWhere(tasks.clientId))).toEqual([]);
  });

  it('clientWhere keeps the client scope and never matches internal rows', async () => {
    expect(await taskIds(operatorAll.clientWhere(tasks.clientId))).toEqual(['t_a', 't_b']);
    expect(await taskIds(operatorEmpty.clientWhere(tasks.clientId))).toEqual([]);
    expect(await taskIds(operatorA.clientWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(serviceA.clientWhere(tasks.clientId))).toEqual(['t_a']);
  });

  it('widenedReadWhere applies rule 3', async () => {
    expect(await taskIds(operatorEmpty.widenedReadWhere(tasks.clientId))).toEqual(['t_a', 't_b', 't_int']);
    expect(await taskIds(operatorA.widenedReadWhere(tasks.clientId))).toEqual(['t_a', 't_b', 't_int']);
    expect(await taskIds(clientAdminA.widenedReadWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(serviceA.widenedReadWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(keyAll.widenedReadWhere(tasks.clientId))).toEqual(['t_a', 't_b']);
    expect(await taskIds(keyA.widenedReadWhere(tasks.clientId))).toEqual(['t_a']);
    expect(await taskIds(keyEmpty.widenedReadWhere(tasks.clientId))).toEqual([]);
  });
});
