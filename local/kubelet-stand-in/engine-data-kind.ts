import fs from 'node:fs';
import path from 'node:path';
import { COUCHDB_RELEASE_ENV, type CouchEngineKind } from '../couch-engine/index.js';

/** The file in a volume that names the engine kind whose data it holds. */
export const ENGINE_KIND_FILE = '.settee-engine-kind';
/** The container's waiting reason while its volume holds another engine kind's data. */
export const ENGINE_DATA_MISMATCH_REASON = 'EngineDataMismatch';

const HOW_TO_RUN: Record<CouchEngineKind, string> = {
  'pouchdb-server': `with ${COUCHDB_RELEASE_ENV}=none`,
  'apache-couchdb': `with a CouchDB release (../shared/engines/ or ${COUCHDB_RELEASE_ENV})`,
};

/**
 * LOCAL PLATFORM ONLY. The pouchdb-server stand-in and Apache CouchDB keep their databases in
 * files the other cannot read (a real CouchDB's folder made the stand-in reset every connection).
 * A volume is marked with the engine kind that first used it; an engine of the other kind is not
 * started on it. Nothing is deleted: the message says how to use the data, or how to start clean.
 * Undefined when `kind` may use the folder, else the waiting message. Synchronous: it is on the
 * wake path before every spawn, one small local file (see startApacheCouchDbEngine).
 */
export function claimVolumeForEngine(options: {
  folder: string;
  kind: CouchEngineKind;
  claim: string;
}): string | undefined {
  const file = path.join(options.folder, ENGINE_KIND_FILE);
  const recorded = readMark(file);
  if (recorded === '') {
    fs.writeFileSync(file, `${options.kind}\n`);
    return undefined;
  }
  if (recorded === options.kind) return undefined;
  const known = recorded === 'pouchdb-server' || recorded === 'apache-couchdb';
  const runWith = known ? `; run \`make run\` ${HOW_TO_RUN[recorded]} to use it` : '';
  return (
    `volume of claim ${options.claim} holds data written by ${recorded}, and this node runs ${options.kind}` +
    `${runWith}, or delete the instance (its volume goes with it) to start clean. Nothing was deleted.`
  );
}

/** The kind a volume is marked with; '' when it is not marked yet. */
function readMark(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
