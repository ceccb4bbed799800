// reviews.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const reviewsHandlers = {
  'reviews.list': notImplemented('reviews.list'),
  'reviews.get': notImplemented('reviews.get'),
  'reviews.release': notImplemented('reviews.release'),
};
