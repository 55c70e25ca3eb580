import { ARCHIVE_FORMAT, MANIFEST_FILE } from './archive-format.js';
import type { BackupManifest } from './manifest.js';
import type { ObjectStorage } from './object-storage.js';
import { instanceFolder } from './run-backup.js';

/**
 * The completed backups of an instance as the bucket holds them: every `<backup>/manifest.json`
 * under the instance's folder (the manifest is written last, so its presence is what makes a
 * backup). This is what is left to restore from once the instance and its CouchBackups are
 * deleted: the bucket keeps the archives. Manifests not of this format or of another instance are
 * passed over. Read one by one: an instance keeps `retain` backups, a handful.
 */
export async function listBucketBackups(
  storage: ObjectStorage,
  instance: { namespace: string; name: string },
): Promise<BackupManifest[]> {
  const folder = instanceFolder(instance);
  const manifestKeys = (await storage.listKeys(folder)).filter((key) => {
    const rest = key.slice(folder.length + 1).split('/');
    return rest.length === 2 && rest[1] === MANIFEST_FILE;
  });
  const manifests: BackupManifest[] = [];
  for (const key of manifestKeys) {
    const manifest = await storage.readJson<BackupManifest>(key);
    if (
      manifest.format === ARCHIVE_FORMAT &&
      manifest.instance?.namespace === instance.namespace &&
      manifest.instance?.name === instance.name &&
      key === `${folder}/${manifest.backup}/${MANIFEST_FILE}`
    )
      manifests.push(manifest);
  }
  return manifests;
}
