import type { CouchEngine } from '../../local/couch-engine/index.js';
import type { S3Server } from '../../local/s3-server.js';

/** The environment measure-run.ts reads: the engine to back up or restore into, and the bucket. */
export function measureRunEnv(
  engine: CouchEngine,
  admin: { username: string; password: string },
  s3: S3Server,
  bucket: string,
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    BENCH_COUCH_ORIGIN: engine.url,
    BENCH_COUCH_USER: admin.username,
    BENCH_COUCH_PASSWORD: admin.password,
    BENCH_S3_ENDPOINT: s3.endpoint,
    BENCH_S3_BUCKET: bucket,
    BENCH_S3_ACCESS_KEY_ID: s3.accessKeyId,
    BENCH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}
