// intake.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const intakeHandlers = {
  'intake.list': notImplemented('intake.list'),
  'intake.get': notImplemented('intake.get'),
  'intake.create': notImplemented('intake.create'),
  'intake.draft.set_field': notImplemented('intake.draft.set_field'),
  'intake.reopen_field': notImplemented('intake.reopen_field'),
  'intake.finalize': notImplemented('intake.finalize'),
};
