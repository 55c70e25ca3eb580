import fs from 'node:fs/promises';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { LuaScript, type ScriptKeyCount } from '../../../../gateway/queue/scripts/lua-script.js';
import { deleteQueue } from '../../../../gateway/queue/scripts/delete-queue.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { buildRawStep } from '../../../../gateway/queue/core/workflow-message.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { WorkflowLetterStore } from '../../../../gateway/queue/stores/workflow-letter-store.js';
import {
  WORKFLOW_INLINE_STEPS_BYTES,
  WorkflowRunStore,
} from '../../../../gateway/queue/stores/workflow-run-store.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

const SCRIPTS_DIR = path.resolve('gateway/queue/scripts');

/** Every LuaScript the queue's scripts/ folder exports, with the file that exports it. */
async function allScripts(): Promise<{ file: string; script: LuaScript }[]> {
  const found: { file: string; script: LuaScript }[] = [];
  for (const file of (await fs.readdir(SCRIPTS_DIR)).filter((name) => name.endsWith('.ts')).sort()) {
    const module = (await import(path.join(SCRIPTS_DIR, file))) as Record<string, unknown>;
    for (const value of Object.values(module))
      if (value instanceof LuaScript) found.push({ file, script: value });
  }
  return found;
}

/**
 * The highest KEYS index a script may read by a literal number: its fixed keys, plus the first
 * group's when a run always has at least one group (lua-script.ts ScriptKeyCount).
 */
function highestLiteralKey(count: ScriptKeyCount): number {
  if (typeof count === 'number') return count;
  return count.groupsOptional ? count.first : count.first + count.each;
}

/** The `n` of each `KEYS[n]` with a literal n in a script's Lua. */
function literalKeyIndexes(lua: string): number[] {
  return [...lua.matchAll(/KEYS\[\s*(\d+)\s*\]/g)].map((match) => Number(match[1]));
}

/** `calls` of a command in INFO commandstats (0 when it was not called since the last reset). */
async function callsOf(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

describe("the queue's Lua scripts against a real Redis", () => {
  const db = useGatewayRedis();

  it('when every script of scripts/ is loaded with SCRIPT LOAD, then each compiles to its own sha and reads no KEYS[n] beyond its declared key count', async () => {
    const scripts = await allScripts();
    // Every file that builds a LuaScript exports it, so none escapes the checks below.
    for (const file of (await fs.readdir(SCRIPTS_DIR)).filter((name) => name.endsWith('.ts'))) {
      const source = await fs.readFile(path.join(SCRIPTS_DIR, file), 'utf8');
      const built = source.match(/new LuaScript\(/g)?.length ?? 0;
      expect({ file, exported: scripts.filter((s) => s.file === file).length }).toEqual({
        file,
        exported: built,
      });
    }
    expect(new Set(scripts.map(({ script }) => script.name)).size).toBe(scripts.length);

    for (const { file, script } of scripts) {
      expect({ file, sha: await db.inspect.script('LOAD', script.lua) }).toEqual({ file, sha: script.sha });
      const beyond = literalKeyIndexes(script.lua).filter(
        (n) => n < 1 || n > highestLiteralKey(script.numberOfKeys),
      );
      expect({ file, beyond }).toEqual({ file, beyond: [] });
    }
  });

  it('when the server does not have a script (first use, SCRIPT FLUSH, a restart), then the run falls back to EVAL once and later runs use EVALSHA alone', async () => {
    const keys = ['{lua-noscript}:queues', '{lua-noscript}:waiting', '{lua-noscript}:active'];
    await db.inspect.script('FLUSH');
    await db.inspect.config('RESETSTAT');
    expect(await db.inspect.script('EXISTS', deleteQueue.sha)).toEqual([0]);

    expect(await deleteQueue.run(db.redis, keys, ['orders'])).toBeNull();
    expect(await callsOf(db.inspect, 'eval')).toBe(1);
    expect(await db.inspect.script('EXISTS', deleteQueue.sha)).toEqual([1]);

    await db.inspect.hset(keys[0]!, 'orders', '{}');
    await db.inspect.rpush(keys[1]!, 'm1', 'm2');
    expect(await deleteQueue.run(db.redis, keys, ['orders'])).toEqual(['m1', 'm2']);
    expect(await callsOf(db.inspect, 'eval')).toBe(1);
    expect(await callsOf(db.inspect, 'evalsha')).toBeGreaterThanOrEqual(2);
  });

  it('when a script fails for another reason than NOSCRIPT, then the error is thrown and the script is not sent again with EVAL', async () => {
    const keys = ['{lua-wrongtype}:queues', '{lua-wrongtype}:waiting', '{lua-wrongtype}:active'];
    await db.inspect.set(keys[0]!, 'not a hash');
    await deleteQueue.run(db.redis, ['{lua-load}:q', '{lua-load}:w', '{lua-load}:a'], ['none']);
    await db.inspect.config('RESETSTAT');

    await expect(deleteQueue.run(db.redis, keys, ['orders'])).rejects.toThrow(/WRONGTYPE/);
    expect(await callsOf(db.inspect, 'eval')).toBe(0);
  });

  it('when 50 runs start in one pass of the event loop, then they leave the socket in one write and each gets its own answer, its arguments byte for byte', async () => {
    const echo = new LuaScript('echo', 1, 'return {KEYS[1], ARGV[1], ARGV[2], ARGV[3]}');
    await echo.run(db.redis, ['{lua-echo}:k'], [0, '', Buffer.alloc(0)]);
    // Node's Writable hands a socket's bytes to _write (one chunk) or _writev (several): one call, one write.
    type Write = (...args: unknown[]) => unknown;
    const socket = db.redis.stream as unknown as { _write: Write; _writev: Write };
    let writes = 0;
    const [write, writev] = [socket._write, socket._writev];
    socket._write = (...args: unknown[]) => (writes++, write.apply(socket, args));
    socket._writev = (...args: unknown[]) => (writes++, writev.apply(socket, args));
    try {
      const sent = Array.from(
        { length: 50 },
        (_, i) => [i, `ünï ✓ ${'x'.repeat(i * 7)}`, Buffer.from([i, 0, 13, 10])] as const,
      );
      const answers = await Promise.all(
        sent.map((args) => echo.runForBuffers(db.redis, [`{lua-echo}:${args[0]}`], [...args])),
      );
      expect(answers).toEqual(
        sent.map(([i, text, bytes]) => [
          Buffer.from(`{lua-echo}:${i}`),
          Buffer.from(String(i)),
          Buffer.from(text),
          bytes,
        ]),
      );
      expect(writes).toBe(1);
    } finally {
      Object.assign(socket, { _write: write, _writev: writev });
    }
  });

  it("when a retried delivery publishes a run's step again, then the repeat joins the list but is not counted, so a run at its limits goes on; a new step past them is still refused", async () => {
    const k = queueKeys('{lua-steps}:');
    const runs = new WorkflowRunStore(db.redis, k, { maxSteps: 3, maxContextBytes: 1_000 });
    const runId = 'wfr_repeated';
    const step = (messageId: string, json: object) =>
      buildRawStep(messageId, Buffer.from(JSON.stringify(json)), Date.now());
    const body = (stepId: number) => ({
      stepId,
      stepName: `s${stepId}`,
      stepType: 'Run',
      out: 'x'.repeat(300),
    });
    await runs.start({
      runId,
      config: { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 },
      createdAt: Date.now(),
      firstStep: step('msg_payload', {}),
    });
    await runs.append(runId, [step('msg_1', body(1))]);
    await runs.append(runId, [step('msg_2', body(2))]);
    // Step 2 again (a new message id, as the SDK publishes it again), and a parallel group's
    // plan step twice: the SDK's parser tells plan steps apart by targetStep.
    await runs.append(runId, [step('msg_2b', body(2))]);
    await runs.append(runId, [step('msg_p', { stepId: 0, targetStep: 3, concurrent: 2, stepType: 'Run' })]);
    await runs.append(runId, [step('msg_pb', { stepId: 0, targetStep: 3, concurrent: 2, stepType: 'Run' })]);
    expect(await runs.steps(runId)).toHaveLength(6);
    const [context, repeated] = await db.inspect.hmget(k.workflowRun(runId), 'contextBytes', 'repeatedSteps');
    expect(repeated).toBe('2');
    // The payload ({}) and steps 1, 2 and the plan step once each.
    const counted = [{}, body(1), body(2), { stepId: 0, targetStep: 3, concurrent: 2, stepType: 'Run' }];
    expect(Number(context)).toBe(counted.reduce((sum: number, json) => sum + JSON.stringify(json).length, 0));
    // A group's check: the plan step published again takes no room, one more step does.
    const plan = step('msg_pc', { stepId: 0, targetStep: 3, concurrent: 2, stepType: 'Run' });
    await expect(runs.append(runId, [plan])).resolves.toMatchObject({ appended: true });
    await expect(runs.append(runId, [plan, step('msg_5', body(5))])).rejects.toThrow(/3 steps, 3 at most/);
    // The count comes back from the script as bytes: the message names it as a number.
    await expect(runs.append(runId, [step('msg_4', body(4))])).rejects.toThrow(
      /has 3 steps, 3 at most \(maxWorkflowSteps\)/,
    );
    await expect(runs.append(runId, [step('msg_2c', body(2))])).resolves.toMatchObject({ appended: true });
  });

  it("when a step is appended, then the script answers the run's settings and creation time with the body, and the payload only for a run with a failure callback", async () => {
    const k = queueKeys('{lua-append}:');
    const runs = new WorkflowRunStore(db.redis, k);
    const payload = buildRawStep('msg_payload', Buffer.from('{"order":1}'), 1_000);
    const start = (runId: string, failureCallback?: { url: string }) =>
      runs.start({
        runId,
        config: {
          url: 'http://127.0.0.1:9/wf',
          headers: { 'content-type': 'application/json' },
          retries: 2,
          ...(failureCallback && {
            failureCallback: { ...failureCallback, method: 'POST', headers: {}, retries: 0 },
          }),
        },
        createdAt: 1_000,
        firstStep: payload,
      });
    await start('wfr_plain');
    await start('wfr_failing', { url: 'http://127.0.0.1:9/failed' });
    const step = buildRawStep('msg_1', Buffer.from('{"stepId":1}'), 2_000);

    const plain = await runs.append('wfr_plain', [step]);
    expect(plain).toEqual({
      appended: true,
      bodies: [Buffer.from(`[${JSON.stringify(payload)},${JSON.stringify(step)}]`)],
      createdAt: 1_000,
      config: { url: 'http://127.0.0.1:9/wf', headers: { 'content-type': 'application/json' }, retries: 2 },
    });
    const failing = await runs.append('wfr_failing', [step]);
    expect(failing).toMatchObject({ appended: true, initialBody: payload.body });
    await expect(runs.append('wfr_unknown', [step])).resolves.toEqual({ appended: false, state: '' });
    // A running hash without its config is no run (runs.get reads none): refused as unknown, not
    // a script error, and nothing joins its steps.
    await db.inspect.hset(k.workflowRun('wfr_configless'), 'state', 'RUN_STARTED', 'createdAt', '1000');
    await expect(runs.append('wfr_configless', [step])).resolves.toEqual({ appended: false, state: '' });
    expect(await db.inspect.exists(k.workflowSteps('wfr_configless'))).toBe(0);
  });

  it("when a run's steps pass the inline limit, then its bodies are empty without a read of its steps, and a run started before the count still gets its body from the list", async () => {
    const k = queueKeys('{lua-inline}:');
    const runs = new WorkflowRunStore(db.redis, k);
    const big = (messageId: string) =>
      buildRawStep(
        messageId,
        Buffer.from(JSON.stringify({ out: 'x'.repeat(WORKFLOW_INLINE_STEPS_BYTES / 3) })),
        1,
      );
    await runs.start({
      runId: 'wfr_long',
      config: { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 },
      createdAt: 1,
      firstStep: buildRawStep('msg_payload', Buffer.from('{}'), 1),
    });
    await expect(runs.append('wfr_long', [big('msg_1')])).resolves.toMatchObject({ appended: true });
    // Base64 makes a third of the limit four ninths of it: the second such step passes it.
    const second = await runs.append('wfr_long', [big('msg_2')]);
    expect(second).toMatchObject({ appended: true, bodies: [Buffer.alloc(0)] });
    await db.inspect.config('RESETSTAT');
    await expect(runs.append('wfr_long', [big('msg_3')])).resolves.toMatchObject({
      bodies: [Buffer.alloc(0)],
    });
    expect(await callsOf(db.inspect, 'lrange')).toBe(0);

    // A run as the gateway stored it before the count: its next body is still the whole list.
    await runs.start({
      runId: 'wfr_old',
      config: { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 },
      createdAt: 1,
      firstStep: buildRawStep('msg_payload', Buffer.from('{}'), 1),
    });
    await db.inspect.hdel(k.workflowRun('wfr_old'), 'inlineBytes');
    const small = buildRawStep('msg_s', Buffer.from('{"stepId":1}'), 2);
    const appended = await runs.append('wfr_old', [small]);
    expect(appended).toMatchObject({ appended: true });
    expect(JSON.parse((appended as { bodies: Buffer[] }).bodies[0]!.toString())).toHaveLength(2);
  });

  it('when a failed run resumes as a new run, then the new one has its steps, counted steps and context and runs, the failed one stays as it ended; a run not failed or a taken id is refused', async () => {
    const k = queueKeys('{lua-resume}:');
    const runs = new WorkflowRunStore(db.redis, k, { maxSteps: 3, maxContextBytes: 1_000 });
    const config = { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 };
    const step = (messageId: string, json: object) =>
      buildRawStep(messageId, Buffer.from(JSON.stringify(json)), Date.now());
    await runs.start({ runId: 'wfr_failed', config, createdAt: 1, firstStep: step('msg_p', {}) });
    await runs.append('wfr_failed', [step('msg_1', { stepId: 1, out: 'a' })]);
    await runs.append('wfr_failed', [step('msg_1b', { stepId: 1, out: 'a' })]);
    const as = { runId: 'wfr_resumed', config: { ...config, retries: 2 }, createdAt: 5 };
    // The run's entry in the DLQ, which each resume takes (workflow-dlq-actions.test.ts tests the rest).
    const resume = async (failedRunId: string, run: typeof as) => {
      await db.inspect.hset(k.deadLetters, 'dlq_1', '{}');
      const delivery = createMessage({
        destination: config.url,
        method: 'POST',
        headers: {},
        body: Buffer.from('s'),
        retries: 0,
      });
      return new WorkflowLetterStore(db.redis, k, 0).resume({ dlqId: 'dlq_1', failedRunId, run, delivery });
    };
    expect(await resume('wfr_failed', as)).toBe('not-failed');
    await runs.finish('wfr_failed', { state: 'RUN_FAILED', at: 3, failure: '{"dlqId":"d"}' });

    expect(await resume('wfr_failed', as)).toBe('started');
    expect(await runs.get('wfr_resumed')).toEqual({ ...as, state: 'RUN_STARTED' });
    expect(await runs.steps('wfr_resumed')).toEqual(await runs.steps('wfr_failed'));
    expect(await db.inspect.smembers(k.workflowStepIds('wfr_resumed'))).toEqual(['step:1']);
    const counts = ['contextBytes', 'repeatedSteps', 'inlineBytes'];
    expect(await db.inspect.hmget(k.workflowRun('wfr_resumed'), ...counts)).toEqual(
      await db.inspect.hmget(k.workflowRun('wfr_failed'), ...counts),
    );
    expect(await db.inspect.zscore(k.workflowRunOrder, 'wfr_resumed')).toBe('5');
    expect(await runs.get('wfr_failed')).toMatchObject({ state: 'RUN_FAILED', finishedAt: 3 });
    // The limits count on from the failed run's: two steps more fit, a third does not.
    await runs.append('wfr_resumed', [step('msg_2', { stepId: 2 })]);
    await runs.append('wfr_resumed', [step('msg_3', { stepId: 3 })]);
    await expect(runs.append('wfr_resumed', [step('msg_4', { stepId: 4 })])).rejects.toThrow(
      /maxWorkflowSteps/,
    );
    expect(await runs.steps('wfr_failed')).toHaveLength(3);

    expect(await resume('wfr_failed', as)).toBe('id-taken');
    expect(await resume('wfr_unknown', { ...as, runId: 'wfr_other' })).toBe('not-failed');
    expect(await db.inspect.exists(k.workflowRun('wfr_other'))).toBe(0);
  });
});
