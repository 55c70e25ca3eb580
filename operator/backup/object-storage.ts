import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

/** Where backups go: an S3-compatible bucket (AWS S3, MinIO, versitygw, Ceph RGW, R2, ...). */
export interface ObjectStorageTarget {
  /** Empty for AWS S3's own endpoints. */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  /** Key prefix, without leading or trailing slash; may be empty. */
  prefix: string;
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`), which MinIO and most on-premise servers need. */
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

/** Multipart part size: with UPLOAD_QUEUE_SIZE parts in flight, what one upload holds in memory. */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;
const UPLOAD_QUEUE_SIZE = 2;

export class ObjectStorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ObjectStorageError';
  }
}

function describe(err: unknown): string {
  const { name, message } = err as { name?: string; message?: string };
  return name && message && !message.includes(name) ? `${name}: ${message}` : (message ?? String(err));
}

/** One bucket, through the AWS SDK v3; every key is under the target's prefix. */
export class ObjectStorage {
  private readonly client: S3Client;

  constructor(
    readonly target: ObjectStorageTarget,
    options: { requestTimeoutMs: number; maxAttempts: number },
  ) {
    this.client = new S3Client({
      ...(target.endpoint ? { endpoint: target.endpoint } : {}),
      region: target.region,
      forcePathStyle: target.forcePathStyle,
      credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      maxAttempts: options.maxAttempts,
      requestHandler: {
        requestTimeout: options.requestTimeoutMs,
        connectionTimeout: options.requestTimeoutMs,
      },
      // Checksums only where an operation requires one: not every S3-compatible server knows the
      // newer CRC headers the SDK sends by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  key(relative: string): string {
    return this.target.prefix ? `${this.target.prefix}/${relative}` : relative;
  }

  location(relative: string): string {
    return `s3://${this.target.bucket}/${this.key(relative)}`;
  }

  /** Streams `body` as a multipart upload; aborted (parts removed) when it fails or `signal` fires. */
  async upload(
    relative: string,
    body: Readable,
    options: { contentType: string; signal?: AbortSignal },
  ): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.target.bucket,
        Key: this.key(relative),
        Body: body,
        ContentType: options.contentType,
      },
      partSize: UPLOAD_PART_BYTES,
      queueSize: UPLOAD_QUEUE_SIZE,
      leavePartsOnError: false,
    });
    const abort = (): void => void upload.abort().catch(() => undefined);
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } catch (err) {
      body.destroy();
      throw new ObjectStorageError(`uploading ${this.location(relative)}: ${describe(err)}`, { cause: err });
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  }

  async putJson(relative: string, value: unknown): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.target.bucket,
          Key: this.key(relative),
          Body: JSON.stringify(value, null, 2),
          ContentType: 'application/json',
        }),
      );
    } catch (err) {
      throw new ObjectStorageError(`writing ${this.location(relative)}: ${describe(err)}`, { cause: err });
    }
  }

  async read(relative: string): Promise<Readable> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.target.bucket, Key: this.key(relative) }),
      );
      return answer.Body as Readable;
    } catch (err) {
      throw new ObjectStorageError(`reading ${this.location(relative)}: ${describe(err)}`, { cause: err });
    }
  }

  async readJson<T>(relative: string): Promise<T> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.read(relative)) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
  }

  /** The keys of every object under `relative/`, relative to the storage prefix. */
  async listKeys(relative: string): Promise<string[]> {
    const prefix = `${this.key(relative)}/`;
    try {
      return (await this.objectKeysUnder(prefix)).map((key) => `${relative}/${key.slice(prefix.length)}`);
    } catch (err) {
      throw new ObjectStorageError(`listing ${this.location(relative)}/: ${describe(err)}`, { cause: err });
    }
  }

  /** Deletes every object under `relative/` (a backup's folder). */
  async deleteFolder(relative: string): Promise<void> {
    try {
      // One DeleteObject per key: a backup's folder holds two objects, and the batch call needs a
      // Content-MD5 that not every S3-compatible server accepts in the SDK's newer checksum form.
      for (const key of await this.objectKeysUnder(`${this.key(relative)}/`))
        await this.client.send(new DeleteObjectCommand({ Bucket: this.target.bucket, Key: key }));
    } catch (err) {
      throw new ObjectStorageError(`deleting ${this.location(relative)}/: ${describe(err)}`, { cause: err });
    }
  }

  /** The full keys of the objects under a key prefix, every page of the listing. */
  private async objectKeysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const pages = paginateListObjectsV2(
      { client: this.client },
      { Bucket: this.target.bucket, Prefix: prefix },
    );
    for await (const page of pages)
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    return keys;
  }

  /**
   * Aborts every multipart upload under `relative/` begun before `before`, and returns their keys.
   * An operator that crashes mid-backup cannot abort its own upload: its parts stay in the bucket,
   * invisible as objects but taking space, until someone aborts it. Uploads begun later are left
   * alone, as they may be a running backup's.
   */
  async abortUploadsStartedBefore(relative: string, before: Date): Promise<string[]> {
    const prefix = `${this.key(relative)}/`;
    const aborted: string[] = [];
    try {
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      do {
        const page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.target.bucket,
            Prefix: prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
        for (const upload of page.Uploads ?? []) {
          if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated >= before) continue;
          await this.client.send(
            new AbortMultipartUploadCommand({
              Bucket: this.target.bucket,
              Key: upload.Key,
              UploadId: upload.UploadId,
            }),
          );
          aborted.push(upload.Key);
        }
        keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
        uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
      } while (keyMarker);
    } catch (err) {
      throw new ObjectStorageError(
        `aborting stale uploads under ${this.location(relative)}/: ${describe(err)}`,
        {
          cause: err,
        },
      );
    }
    return aborted;
  }

  destroy(): void {
    this.client.destroy();
  }
}
