// events.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const eventsHandlers = {
  'events.list': notImplemented('events.list'),
  'events.stream': notImplemented('events.stream'),
};
