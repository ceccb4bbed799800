// The Platform API's id prefixes: its domain records' kinds, beside its tables (handlers/data/schema.ts).
// The runtime's newId knows only the machinery's kinds (runtime/data/ids.ts); a domain id is the
// runtime's random part under one of these prefixes, so every id keeps the prefix it always had.
import { newId } from '../../runtime/data/ids.ts';

export const DOMAIN_ID_PREFIXES = {
  project: 'prj',
  task: 'tsk',
  comment: 'cmt',
  intake: 'int',
  extraction: 'ext',
} as const;

export type DomainIdKind = keyof typeof DOMAIN_ID_PREFIXES;

/** A new id of one of the Platform API's record kinds (newDomainId('task') -> tsk_…). */
export function newDomainId(kind: DomainIdKind): string {
  return newId(DOMAIN_ID_PREFIXES[kind]);
}
