import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ENGINE_IDENTITY_FILE, loadEngineIdentity } from '../../../../local/couch-engine/engine-identity.js';
import { InvalidCouchEngineConfigError } from '../../../../local/couch-engine/errors.js';

describe('loadEngineIdentity', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-identity-'));
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('when loaded twice from one data folder, then the identity is the same', () => {
    const first = loadEngineIdentity(dataDir);
    expect(first.uuid).toMatch(/^[0-9a-f]{32}$/);
    expect(loadEngineIdentity(dataDir)).toEqual(first);
  });

  it('when loaded from two data folders, then the uuids and secrets differ', async () => {
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-identity-'));
    try {
      const [a, b] = [loadEngineIdentity(dataDir), loadEngineIdentity(other)];
      expect(a.uuid).not.toBe(b.uuid);
      expect(a.secret).not.toBe(b.secret);
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });

  it('when a uuid is given, then it wins and is kept for later loads without one', () => {
    const generated = loadEngineIdentity(dataDir);
    const given = loadEngineIdentity(dataDir, 'instance-uid-1');
    expect(given).toEqual({ ...generated, uuid: 'instance-uid-1' });
    expect(loadEngineIdentity(dataDir).uuid).toBe('instance-uid-1');
  });

  it('when the uuid cannot go into an ini file, then it is refused', () => {
    expect(() => loadEngineIdentity(dataDir, 'a b')).toThrow(InvalidCouchEngineConfigError);
  });

  it('when the kept file is damaged, then loading fails instead of silently changing the identity', async () => {
    await fs.writeFile(path.join(dataDir, ENGINE_IDENTITY_FILE), '{"uuid": 1}');
    expect(() => loadEngineIdentity(dataDir)).toThrow(InvalidCouchEngineConfigError);
  });
});
