import type http from 'node:http';

/** The errors a refused body rejects with, so each caller answers in its own API's terms. */
export interface BodyRefusals {
  /** The body is larger than the limit. */
  tooLarge: () => Error;
  /** The client went away before its body was whole. */
  aborted: () => Error;
}

const PLAIN_REFUSALS: BodyRefusals = {
  tooLarge: () => new Error('request body is too large'),
  aborted: () => new Error('the request was aborted'),
};

/**
 * Reads a request's whole body, refusing it once it is larger than `limit` bytes: at once when
 * Content-Length says so, otherwise as soon as the bytes received pass it. Bytes that are not
 * read are discarded by node:http once the response ends. Shared by the proxy (a _bulk_docs read
 * to admit deletions) and the queue's API.
 */
export function readLimitedBody(
  req: http.IncomingMessage,
  limit: number,
  refusals: BodyRefusals = PLAIN_REFUSALS,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(refusals.tooLarge());
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
      if (received > limit) finish(refusals.tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined);
    const onAborted = (): void => finish(refusals.aborted());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
  });
}
