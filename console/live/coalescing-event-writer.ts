/** Where server-sent events go: an HTTP response, or a fake in the unit tests. */
export interface EventSink {
  /** Like stream.write: false when the socket's buffer is full. */
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** One server-sent event. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

export function formatEvent(message: StreamEvent): string {
  // JSON has no raw newlines, so the data is one `data:` line whatever the object's strings hold.
  return `event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
}

/**
 * Writes server-sent events with backpressure: while the browser reads slower than changes come,
 * events wait in a map keyed by object, where a newer state of the same object replaces the older,
 * so what is held per stream is bounded by the objects in the namespace, not by how many changes
 * there were. When the socket drains, the latest state of each object goes out.
 */
export class CoalescingEventWriter {
  private readonly pending = new Map<string, StreamEvent>();
  private blocked = false;
  private written = 0;
  private coalesced = 0;

  constructor(private readonly sink: EventSink) {}

  /** Queues or writes `message`; `key` names the object it is about (a later one replaces it). */
  send(key: string, message: StreamEvent): void {
    if (this.blocked) {
      if (this.pending.has(key)) this.coalesced += 1;
      // Re-inserting moves the key to the end, keeping the order in which objects last changed.
      this.pending.delete(key);
      this.pending.set(key, message);
      return;
    }
    this.write(message);
  }

  /** Drops everything pending (a fresh snapshot supersedes it) and sends `message`. */
  reset(message: StreamEvent): void {
    this.coalesced += this.pending.size;
    this.pending.clear();
    this.send('\u0000snapshot', message);
  }

  /** Raw text (comments as heartbeats) only when the socket is not backed up. */
  heartbeat(): void {
    if (!this.blocked) this.writeRaw(': keep-alive\n\n');
  }

  get stats(): { written: number; coalesced: number; pending: number } {
    return { written: this.written, coalesced: this.coalesced, pending: this.pending.size };
  }

  private write(message: StreamEvent): void {
    this.written += 1;
    this.writeRaw(formatEvent(message));
  }

  private writeRaw(chunk: string): void {
    if (this.sink.write(chunk)) return;
    this.blocked = true;
    this.sink.once('drain', () => this.flush());
  }

  private flush(): void {
    this.blocked = false;
    while (!this.blocked && this.pending.size > 0) {
      const [key, message] = this.pending.entries().next().value as [string, StreamEvent];
      this.pending.delete(key);
      this.write(message);
    }
  }
}
