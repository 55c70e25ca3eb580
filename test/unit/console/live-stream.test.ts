import { CoalescingEventWriter, type EventSink } from '../../../console/live/coalescing-event-writer.js';
import { StreamLimiter } from '../../../console/live/stream-limiter.js';

/** A socket whose buffer takes `capacity` writes before it reports full, until drained. */
class FakeSink implements EventSink {
  readonly chunks: string[] = [];
  private drainListener: (() => void) | undefined;
  full = false;

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return !this.full;
  }

  once(_event: 'drain', listener: () => void): void {
    this.drainListener = listener;
  }

  drain(): void {
    this.full = false;
    const listener = this.drainListener;
    this.drainListener = undefined;
    listener?.();
  }
}

describe('the coalescing event writer', () => {
  it('when the socket keeps up, then every event goes out in order as one SSE frame each', () => {
    const sink = new FakeSink();
    const writer = new CoalescingEventWriter(sink);
    writer.send('a', { event: 'upsert', data: { name: 'a', phase: 'Running' } });
    writer.send('b', { event: 'delete', data: { name: 'b' } });
    expect(sink.chunks).toEqual([
      'event: upsert\ndata: {"name":"a","phase":"Running"}\n\n',
      'event: delete\ndata: {"name":"b"}\n\n',
    ]);
  });

  it('when the socket is full, then later changes of one object replace each other and go out once it drains', () => {
    const sink = new FakeSink();
    const writer = new CoalescingEventWriter(sink);
    sink.full = true;
    writer.send('a', { event: 'upsert', data: { phase: 'Running' } }); // accepted, then full
    for (const phase of ['Hibernating', 'Hibernated', 'Waking'])
      writer.send('a', { event: 'upsert', data: { phase } });
    writer.send('b', { event: 'upsert', data: { phase: 'Pending' } });
    expect(sink.chunks).toHaveLength(1);
    expect(writer.stats).toMatchObject({ pending: 2, coalesced: 2 });
    sink.drain();
    expect(sink.chunks.slice(1)).toEqual([
      'event: upsert\ndata: {"phase":"Waking"}\n\n',
      'event: upsert\ndata: {"phase":"Pending"}\n\n',
    ]);
    expect(writer.stats.pending).toBe(0);
  });

  it('when 10,000 changes of 500 objects arrive while blocked, then at most 500 are held', () => {
    const sink = new FakeSink();
    const writer = new CoalescingEventWriter(sink);
    sink.full = true;
    writer.heartbeat();
    for (let i = 0; i < 10_000; i++) writer.send(`i-${i % 500}`, { event: 'upsert', data: { i } });
    expect(writer.stats.pending).toBe(500);
    sink.drain();
    expect(sink.chunks).toHaveLength(501);
  });

  it('when a snapshot is sent while blocked, then what was pending is dropped for it', () => {
    const sink = new FakeSink();
    const writer = new CoalescingEventWriter(sink);
    sink.full = true;
    writer.heartbeat();
    writer.send('a', { event: 'upsert', data: {} });
    writer.reset({ event: 'snapshot', data: { items: [] } });
    sink.drain();
    expect(sink.chunks.slice(1)).toEqual(['event: snapshot\ndata: {"items":[]}\n\n']);
  });

  it('when a string holds newlines, then the frame still has one data line', () => {
    const sink = new FakeSink();
    new CoalescingEventWriter(sink).send('x', {
      event: 'upsert',
      data: { name: 'a\n\nevent: session-ended' },
    });
    expect(sink.chunks[0]?.split('\n').filter((line) => line.startsWith('event:'))).toEqual([
      'event: upsert',
    ]);
  });
});

describe('the per-session stream cap', () => {
  it('when a session reaches its cap, then the next stream is refused until one is released; other sessions are unaffected', () => {
    const limiter = new StreamLimiter(2);
    const first = limiter.acquire('s1');
    limiter.acquire('s1');
    expect(() => limiter.acquire('s1')).toThrow(/already has 2 live views/);
    const other = limiter.acquire('s2');
    first();
    first(); // releasing twice frees one slot only
    limiter.acquire('s1');
    expect(() => limiter.acquire('s1')).toThrow();
    expect(limiter.total).toBe(3);
    other();
    expect(limiter.total).toBe(2);
  });
});
