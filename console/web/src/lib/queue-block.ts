/**
 * The queue block (the VQUEUE_* values, the .env download, key rotation) belongs to Redis and
 * Valkey databases only: a QueueBinding of those engines. A CouchInstance page never shows it.
 */
export const QUEUE_ENGINES = ['redis', 'valkey'] as const;

export type DatabaseKind = { kind: 'queue-binding'; engine: string } | { kind: 'couch-instance' };

export function showsQueueBlock(database: DatabaseKind): boolean {
  return (
    database.kind === 'queue-binding' &&
    (QUEUE_ENGINES as readonly string[]).includes(database.engine.toLowerCase())
  );
}
