// Visibility rules by caller kind (spec, "Visibility rules by caller kind" 1-6), implemented once,
// for any record that carries a client id (client-bound) or none (internal). The runtime names no
// resource here: which families follow which rule, and what a 404 calls the record, is the API's
// (the Platform API's handlers: tasks and files follow rules 1-2, CRM and pipeline reads rule 3).
// Every handler query on client-bound data goes through a Policy built from the request's principal.
//
// Rules 1-3 widen people only: an OAuth operator (Policy.widened). Every API key, bound or unbound,
// is a service account for them (DESIGN.md "API keys are service accounts for visibility"), even
// though an unbound key keeps the principal kind 'operator' and so may call operator-audience
// operations for its owner.
//
// 1. An operator reads internal records (clientId null) whatever its client scope, an empty one
//    included: recordWhere(), canReadRecord(), assertRecordVisible(). The events feed and webhook
//    deliveries follow this rule for events.
// 2. An operator creates, changes and comments on internal records whatever its scope:
//    canWriteInternal(), canWriteRecord(), assertRecordWritable().
// 3. For the families an API reads this way, an operator reads every row, client-bound and
//    internal, whatever its scope: widenedReadWhere(), canReadWidenedRow(),
//    assertWidenedReadClientFilter(). Writes are unchanged.
// 4. client_admin, service_account and every API key are never widened: internal records stay
//    invisible (404) and a key keeps its client scope.
// 5. Every other resource keeps the client scope: clientWhere(), canReadClient(), assertClientInScope().
//    Personal data (name, email, phone) is redacted without the contract's personalData.scope:
//    redactPersonalData().
// 6. Role labels: staff labels (owner, admin, operator) hold every scope, viewer none; a client-admin
//    membership role is a permission when it is a scope name. That is resolved into
//    principal.scopes by authentication (allowedByRole, runtime/auth/principal.ts); the Policy reads
//    the effective scopes as given.
import { inArray, isNull, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Principal } from './principal-type.ts';
import { notFound } from '../problem-error.ts';
import { contractFacts } from '../contract-facts.ts';

const FALSE: SQL = sql`false`;

export interface PersonalDataLike {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  redacted?: boolean;
  [key: string]: unknown;
}

export type RedactedPersonalData<C> = Omit<C, 'name' | 'email' | 'phone' | 'redacted'> & {
  name: string | null;
  email: string | null;
  phone: string | null;
  redacted: boolean;
};

export class Policy {
  readonly principal: Principal;

  constructor(principal: Principal) {
    this.principal = principal;
  }

  get isOperator(): boolean {
    return this.principal.kind === 'operator';
  }

  /** Rules 1-3 apply: a person signed in as an operator (OAuth). API keys are never widened. */
  get widened(): boolean {
    return this.principal.kind === 'operator' && this.principal.loginMethod === 'oauth';
  }

  /** True when the principal reaches every client (an operator without a client binding). */
  get allClients(): boolean {
    return this.principal.clientScope.all;
  }

  get clientIds(): readonly string[] {
    return this.principal.clientScope.clientIds;
  }

  hasScope(scope: string): boolean {
    return this.principal.scopes.has(scope);
  }

  // -------------------------------------------------------------------------------------------
  // Clients (rule 5)

  canReadClient(clientId: string | null | undefined): boolean {
    if (clientId === null || clientId === undefined) return false;
    return this.allClients || this.clientIds.includes(clientId);
  }

  /** 404 not_found unless the client is in the caller's client scope. */
  assertClientInScope(clientId: string | null | undefined, what = 'Client'): void {
    if (!this.canReadClient(clientId)) throw notFound(what);
  }

  /**
   * Rows whose client column is in the caller's client scope (client-bound rows only; a null
   * client never matches). Undefined means no restriction (drizzle's and() skips it).
   */
  clientWhere(clientIdColumn: AnyColumn): SQL | undefined {
    if (this.allClients) return sql`${clientIdColumn} is not null`;
    if (this.clientIds.length === 0) return FALSE;
    return inArray(clientIdColumn, [...this.clientIds]);
  }

  // -------------------------------------------------------------------------------------------
  // Client-bound or internal records (rules 1, 2, 4)

  /** Rule 1 / 4: widened operators see client-bound records in scope and every internal record; others only their clients. */
  recordWhere(clientIdColumn: AnyColumn): SQL | undefined {
    if (this.widened) {
      if (this.allClients) return undefined;
      const inScope = this.clientIds.length > 0 ? inArray(clientIdColumn, [...this.clientIds]) : FALSE;
      return or(isNull(clientIdColumn), inScope);
    }
    return this.clientWhere(clientIdColumn);
  }

  canReadRecord(record: { clientId: string | null }): boolean {
    if (record.clientId === null) return this.widened;
    return this.canReadClient(record.clientId);
  }

  /** 404 unless the record is visible to the caller; `what` names it in the problem ("Task not found"). */
  assertRecordVisible(record: { clientId: string | null } | null | undefined, what: string): asserts record {
    if (!record || !this.canReadRecord(record)) throw notFound(what);
  }

  /** Rule 2: only a widened operator creates or changes an internal record. */
  canWriteInternal(): boolean {
    return this.widened;
  }

  /** Writes follow the same reach as reads (rule 2 for internal records, client scope otherwise). */
  canWriteRecord(record: { clientId: string | null }): boolean {
    if (record.clientId === null) return this.canWriteInternal();
    return this.canReadClient(record.clientId);
  }

  /** 404 unless the caller may change the record; `what` names it in the problem. */
  assertRecordWritable(record: { clientId: string | null } | null | undefined, what: string): asserts record {
    if (!record || !this.canWriteRecord(record)) throw notFound(what);
  }

  // -------------------------------------------------------------------------------------------
  // Widened reads (rule 3): the families an API reads across clients for its operators

  /** Rule 3: a widened operator reads every row; others keep their client scope. */
  widenedReadWhere(clientIdColumn: AnyColumn): SQL | undefined {
    if (this.widened) return undefined;
    return this.clientWhere(clientIdColumn);
  }

  canReadWidenedRow(row: { clientId: string | null }): boolean {
    if (this.widened) return true;
    return this.canReadClient(row.clientId);
  }

  /**
   * A clientId filter on a widened read: served for widened operators whatever their scope (rule 3),
   * 404 for others outside their scope.
   */
  assertWidenedReadClientFilter(clientId: string | null | undefined): void {
    if (clientId === null || clientId === undefined || this.widened) return;
    this.assertClientInScope(clientId);
  }

  // -------------------------------------------------------------------------------------------
  // Personal data (rule 5)

  /**
   * The contract's personalData.scope unlocks personal data (the registry's service facts); a contract
   * that declares none gates it with no scope (docs/decisions.md, "Personal data's scope").
   */
  get canReadPersonalData(): boolean {
    const gate = contractFacts().personalData;
    return gate === undefined || this.hasScope(gate.scope);
  }

  /** Without the personal-data scope, name, email and phone become null and redacted is true. */
  redactPersonalData<C extends PersonalDataLike>(person: C): RedactedPersonalData<C> {
    if (this.canReadPersonalData) {
      return { ...person, name: person.name ?? null, email: person.email ?? null, phone: person.phone ?? null, redacted: false };
    }
    return { ...person, name: null, email: null, phone: null, redacted: true };
  }
}
