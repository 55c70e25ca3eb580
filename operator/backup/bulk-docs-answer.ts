import { CouchRequestError } from './couch-reader.js';

/** What _bulk_docs answers: one entry per document, with `error` for one it refused. */
export type BulkDocsAnswer = { error?: string; id?: string; reason?: string }[];

/** Throws for the first document _bulk_docs refused. */
export function checkBulkAnswers(db: string, answers: BulkDocsAnswer): void {
  const failed = answers.find((answer) => answer.error);
  if (failed)
    throw new CouchRequestError(`${db}/${failed.id ?? '?'}: ${failed.error}: ${failed.reason ?? ''}`);
}
