import type http from 'node:http';
import { RequestAbortedError, RequestBodyTooLargeError } from '../core/errors.js';

/**
 * Reads a request's whole body, refusing it once it is larger than `limit` bytes: at once when
 * Content-Length says so, otherwise as soon as the bytes received pass it. Bytes that are not
 * read are discarded by node:http once the response ends.
 */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(new RequestBodyTooLargeError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err: Error | undefined): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) finish(new RequestBodyTooLargeError());
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined);
    const onAborted = (): void => finish(new RequestAbortedError());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
  });
}
