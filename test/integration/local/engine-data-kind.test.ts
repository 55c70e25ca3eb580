import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { claimVolumeForEngine, ENGINE_KIND_FILE } from '../../../local/kubelet-stand-in/engine-data-kind.js';

describe('a volume keeps to the engine kind that wrote it', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-engine-kind-'));
  });
  afterEach(() => fs.rm(folder, { recursive: true, force: true }));

  it('when a volume is first used, then it is marked with the engine kind, and that kind may use it again', async () => {
    expect(claimVolumeForEngine({ folder, kind: 'pouchdb-server', claim: 'data-notes-0' })).toBeUndefined();
    expect((await fs.readFile(path.join(folder, ENGINE_KIND_FILE), 'utf8')).trim()).toBe('pouchdb-server');
    expect(claimVolumeForEngine({ folder, kind: 'pouchdb-server', claim: 'data-notes-0' })).toBeUndefined();
  });

  it('when another engine kind comes to a volume, then it is refused with how to use the data or start clean, and nothing is deleted', async () => {
    claimVolumeForEngine({ folder, kind: 'pouchdb-server', claim: 'data-notes-0' });
    await fs.writeFile(path.join(folder, 'notes.db'), 'stand-in data');
    const refusal = claimVolumeForEngine({ folder, kind: 'apache-couchdb', claim: 'data-notes-0' });
    expect(refusal).toBe(
      'volume of claim data-notes-0 holds data written by pouchdb-server, and this node runs apache-couchdb; run `make run` with SETTEE_COUCHDB_RELEASE=none to use it, or delete the instance (its volume goes with it) to start clean. Nothing was deleted.',
    );
    expect(await fs.readFile(path.join(folder, 'notes.db'), 'utf8')).toBe('stand-in data');
    expect((await fs.readFile(path.join(folder, ENGINE_KIND_FILE), 'utf8')).trim()).toBe('pouchdb-server');
    expect(claimVolumeForEngine({ folder: folder, kind: 'pouchdb-server', claim: 'x' })).toBeUndefined();
  });
});
