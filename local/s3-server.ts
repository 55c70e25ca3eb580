import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchOnFreePort } from './launch.js';
import { startProcess } from './process.js';
import { supervise } from './supervise.js';

/**
 * versitygw, an S3-compatible server, on a loopback port: where backups go in the tests and in
 * `make run`. Built once from the Go module proxy by tools/build-s3-server.sh (cached in
 * ~/.cache/settee). Its posix backend keeps each bucket as a folder of `dataDir`.
 */
export interface S3Server {
  /** http://127.0.0.1:<port> (path-style addressing: no DNS names for buckets on loopback). */
  endpoint: string;
  port: number;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where the buckets live (`buckets/`, one folder per bucket) and their metadata (`meta/`). */
  dataDir: string;
  /** The running server's pid (a new one after each restart). */
  readonly pid: number;
  /** Stops the server; removes dataDir only when it was a temporary one. Safe to call twice. */
  stop(): Promise<void>;
}

export interface S3ServerOptions {
  /** Buckets made before it resolves (as folders of dataDir, which is what posix buckets are). */
  buckets?: string[];
  /** Kept on stop (default: a temporary folder, removed on stop). */
  dataDir?: string;
  region?: string;
  /** Start it again on the same port whenever it exits without being stopped, telling `log` (make run). */
  restartOnExit?: { log: (message: string) => void };
}

export class S3ServerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'S3ServerUnavailableError';
  }
}

const HOST = '127.0.0.1';
const HEALTH_PATH = '/health';
const BUILD_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tools', 'build-s3-server.sh');

let binary: Promise<string> | undefined;

/** The versitygw binary, built the first time (the build script's progress goes to stderr). */
export function locateS3Server(): Promise<string> {
  binary ??= new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', (err) =>
      reject(new S3ServerUnavailableError(`cannot run ${BUILD_SCRIPT}: ${err.message}`, { cause: err })),
    );
    child.once('exit', (code) => {
      const bin = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && bin) resolve(bin);
      else
        reject(
          new S3ServerUnavailableError(
            `versitygw is unavailable (build script exited ${code}); see the message above, or set ` +
              'SETTEE_VERSITYGW to a versitygw binary',
          ),
        );
    });
  });
  return binary;
}

/**
 * Starts versitygw on a free loopback port with generated root keys and resolves once its health
 * endpoint answers. The keys go through the environment, not the command line, so they do not
 * show in the process list.
 */
export async function startS3Server(options: S3ServerOptions = {}): Promise<S3Server> {
  const bin = await locateS3Server();
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'settee-s3-')));
  // Object metadata in a sidecar folder rather than extended attributes, which not every
  // filesystem (overlay, tmpfs without user xattrs) offers; versitygw wants it outside the root.
  const bucketsDir = path.join(dataDir, 'buckets');
  const metaDir = path.join(dataDir, 'meta');
  await fs.mkdir(metaDir, { recursive: true });
  for (const bucket of options.buckets ?? [])
    await fs.mkdir(path.join(bucketsDir, bucket), { recursive: true });
  await fs.mkdir(bucketsDir, { recursive: true });
  const region = options.region ?? 'us-east-1';
  const accessKeyId = `settee${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('hex');
  const removeData = async (): Promise<void> => {
    if (!temporary) return;
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  const start = (port: number) =>
    startProcess({
      name: `versitygw:${port}`,
      command: bin,
      args: [
        '--port',
        `${HOST}:${port}`,
        '--quiet',
        '--health',
        HEALTH_PATH,
        'posix',
        '--sidecar',
        metaDir,
        bucketsDir,
      ],
      env: {
        PATH: process.env.PATH ?? '',
        ROOT_ACCESS_KEY_ID: accessKeyId,
        ROOT_SECRET_ACCESS_KEY: secretAccessKey,
        VGW_REGION: region,
      },
    });
  const launched = await launchOnFreePort({
    what: 'versitygw',
    start,
    isReady: async (port) => ((await fetch(`http://${HOST}:${port}${HEALTH_PATH}`)).ok ? true : undefined),
    readyTimeoutMs: 20_000,
    intervalMs: 50,
  }).catch(async (err: unknown) => {
    await removeData();
    throw err;
  });
  const supervised = options.restartOnExit
    ? supervise({
        name: 'versitygw',
        first: launched.process,
        start: () => start(launched.port),
        log: options.restartOnExit.log,
      })
    : undefined;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${HOST}:${launched.port}`,
    port: launched.port,
    region,
    accessKeyId,
    secretAccessKey,
    dataDir,
    get pid() {
      return (supervised?.current() ?? launched.process).pid;
    },
    stop: () => (stopped ??= (supervised ?? launched.process).stop().then(removeData)),
  };
}
