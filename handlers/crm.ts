// crm.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const crmHandlers = {
  'crm.leads.list': notImplemented('crm.leads.list'),
  'crm.accounts.list': notImplemented('crm.accounts.list'),
  'crm.contacts.list': notImplemented('crm.contacts.list'),
  'crm.contacts.search': notImplemented('crm.contacts.search'),
  'crm.opportunities.list': notImplemented('crm.opportunities.list'),
  'crm.lead.create': notImplemented('crm.lead.create'),
  'crm.touchpoint.log': notImplemented('crm.touchpoint.log'),
  'crm.opportunity.convert': notImplemented('crm.opportunity.convert'),
};
