import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { checkBulkAnswers, type BulkDocsAnswer } from './bulk-docs-answer.js';
import type { CouchDocument, CouchReader } from './couch-reader.js';

/**
 * One restored document with attachments, written by a single `_bulk_docs` (`new_edits: false`,
 * so it keeps its revision) whose JSON text is streamed as the archive is read: the document's
 * fields, then each attachment's base64 chunk by chunk, then the closing brackets. The archive's
 * chunks are whole base64 (ATTACHMENT_CHUNK_BYTES is a multiple of 3), so they join into one valid
 * string, and base64 needs no JSON escaping. Memory holds a chunk, not an attachment.
 */
export class AttachmentUpload {
  private readonly body = new PassThrough();
  private readonly answer: Promise<BulkDocsAnswer>;
  private attachments = 0;

  private constructor(
    readonly key: string,
    private readonly db: string,
    reader: CouchReader,
  ) {
    this.answer = reader.streamedJson<BulkDocsAnswer>(
      'POST',
      `/${encodeURIComponent(db)}/_bulk_docs`,
      this.body,
    );
    // Seen by write() and finish(); without a listener here a refusal mid-stream would go unhandled.
    this.answer.catch(() => undefined);
  }

  static open(options: {
    reader: CouchReader;
    db: string;
    key: string;
    doc: CouchDocument;
  }): AttachmentUpload {
    const upload = new AttachmentUpload(options.key, options.db, options.reader);
    const { _attachments: _stubs, ...fields } = options.doc;
    const head = JSON.stringify({ new_edits: false, docs: [fields] });
    // `{"new_edits":false,"docs":[{...}]}` opened up before the document's closing brace.
    upload.body.write(`${head.slice(0, -3)},"_attachments":{`);
    return upload;
  }

  async startAttachment(name: string, contentType: string): Promise<void> {
    const separator = this.attachments++ === 0 ? '' : ',';
    await this.write(
      `${separator}${JSON.stringify(name)}:{"content_type":${JSON.stringify(contentType)},"data":"`,
    );
  }

  /** JSON text (the current attachment's base64); waits while CouchDB is slower than the archive. */
  async write(text: string): Promise<void> {
    if (this.body.write(text)) return;
    await Promise.race([once(this.body, 'drain'), this.answer.then(() => undefined)]);
  }

  async endAttachment(): Promise<void> {
    await this.write('"}');
  }

  /** Closes the JSON text and checks CouchDB's answer. */
  async finish(): Promise<void> {
    this.body.end('}}]}');
    checkBulkAnswers(this.db, await this.answer);
  }

  /** Ends an upload cut short (a failed restore), so no request is left open. */
  abandon(): void {
    this.body.destroy();
  }
}
