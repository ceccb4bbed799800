// files.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const filesHandlers = {
  'files.download_url': notImplemented('files.download_url'),
  'files.upload_url': notImplemented('files.upload_url'),
  'files.register': notImplemented('files.register'),
};
