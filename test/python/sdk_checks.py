"""Drives QStash's Python SDK (`qstash` 3.x) against a Settee gateway, for
test/e2e/queue/python-sdk.test.ts: one process runs every check (the interpreter's start is the
slow part) and prints one JSON object, check name -> {"value": ...} or {"error": "<type>: <text>"},
which the jest suite asserts on one check at a time. The SDK reads QSTASH_URL and QSTASH_TOKEN;
SETTEE_DESTINATION is a loopback receiver whose /ok answers 200, /failing 500 and /hanging never.
"""

import json
import os
import sys
import time
import traceback

from qstash import QStash
from qstash.log import LogState

DESTINATION = os.environ["SETTEE_DESTINATION"]
client = QStash(os.environ["QSTASH_TOKEN"], retry=False)


def hook(name):
    return f"{DESTINATION}/{name}"


def eventually(what, read, timeout=10.0):
    """Polls read() until it returns something truthy; the gateway delivers in the background."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not seen within {timeout} s")
        time.sleep(0.05)


def check_publish():
    published = client.message.publish_json(url=hook("ok"), body={"check": "publish"})
    return {"messageId": published.message_id}


def check_batch_without_queue():
    # The SDK sends "queue": null for an item that names no queue.
    answers = client.message.batch_json(
        [{"url": hook("ok"), "body": {"check": "batch", "i": i}} for i in range(2)]
    )
    return {"messageIds": [a.message_id for a in answers]}


def pending(message_id):
    message = client.message.get(message_id)
    return {
        "messageId": message.message_id,
        "notBefore": message.not_before,
        "createdAt": message.created_at,
    }


def check_pending_messages():
    delayed = client.message.publish_json(url=hook("ok"), body={"check": "delayed"}, delay="60s")
    in_flight = client.message.publish_json(
        url=hook("hanging"), body={"check": "in-flight"}, retries=0
    )
    try:
        return {"delayed": pending(delayed.message_id), "inFlight": pending(in_flight.message_id)}
    finally:
        client.message.cancel_many([delayed.message_id, in_flight.message_id])


def dead_letters(message_ids):
    listed = client.dlq.list(count=100).messages
    return [m for m in listed if m.message_id in message_ids]


def check_dead_letters():
    ids = [
        client.message.publish_json(
            url=hook("failing"), body={"check": "dlq", "i": i}, retries=0, retry_delay="1000"
        ).message_id
        for i in range(3)
    ]
    letters = eventually("3 dead letters", lambda: len(dead_letters(ids)) == 3 and dead_letters(ids))
    one = letters[0]
    deleted = client.dlq.delete_many(dlq_ids=[one.dlq_id])
    left = [m.message_id for m in dead_letters(ids)]
    got = client.dlq.get(letters[1].dlq_id)
    return {
        "messageIds": ids,
        "letters": [
            {
                "messageId": m.message_id,
                "notBefore": m.not_before,
                "createdAt": m.created_at,
                "responseStatus": m.response_status,
                "retryDelayExpression": m.retry_delay_expression,
            }
            for m in letters
        ],
        "deletedMessageId": one.message_id,
        "deleted": deleted,
        "left": left,
        "got": {"messageId": got.message_id, "notBefore": got.not_before},
    }


def check_schedule_flow_control():
    schedule_id = client.schedule.create_json(
        destination=hook("ok"),
        cron="0 0 1 1 *",
        body={"check": "schedule"},
        flow_control={"key": "python-sdk", "parallelism": 2},
    )
    try:
        fc = client.schedule.get(schedule_id).flow_control
        return {"key": fc.key, "parallelism": fc.parallelism, "rate": fc.rate, "period": fc.period}
    finally:
        client.schedule.delete(schedule_id)


def check_delete_missing_url_group():
    client.url_group.delete("no-such-url-group")
    return "deleted"


def events_of(message_id):
    return client.log.list(filter={"message_id": message_id}).logs


def check_events():
    failed = client.message.publish_json(
        url=hook("failing"), body={"check": "events"}, retries=0, retry_delay="1000"
    )
    logs = eventually(
        "the FAILED event",
        lambda: (
            lambda found: any(e.state == LogState.FAILED for e in found) and found
        )(events_of(failed.message_id)),
    )
    cancelled = client.message.publish_json(url=hook("ok"), body={"check": "cancel"}, delay="60s")
    client.message.cancel(cancelled.message_id)
    try:
        events_of(cancelled.message_id)
        cancelled_events = "parsed"
    except ValueError as err:
        cancelled_events = f"ValueError: {err}"
    return {
        "failed": [
            {"state": e.state.value, "retryDelayExpression": e.retry_delay_expression}
            for e in logs
        ],
        "cancelledMessageId": cancelled.message_id,
        "cancelledEvents": cancelled_events,
    }


def queue_state(name):
    queue = client.queue.get(name)
    return {"name": queue.name, "parallelism": queue.parallelism, "paused": queue.paused}


def flow_control_state(key):
    info = client.flow_control.get(key)
    return {
        "key": info.key,
        "isPaused": info.is_paused,
        "isPinnedParallelism": info.is_pinned_parallelism,
        "parallelismMax": info.parallelism_max,
    }


def is_gone(message_id):
    try:
        client.message.get(message_id)
        return False
    except Exception as err:  # the SDK raises QStashError with the 404's text
        return "404" in str(err) or "not found" in str(err).lower()


def cancel_all_with_one_delayed():
    delayed = client.message.publish_json(url=hook("ok"), body={"check": "cancel-all"}, delay="60s")
    cancelled = client.message.cancel_all()
    return {"cancelled": cancelled, "delayedGone": is_gone(delayed.message_id)}


def check_other_calls():
    """The SDK's other APIs, each call's answer (None for those that answer nothing) or error;
    a change is read back through the SDK after it is made."""
    fc = {"key": "python-sdk-fc", "parallelism": 1}
    calls = {
        "queue.upsert": lambda: client.queue.upsert("python-sdk", parallelism=2),
        "queue.get": lambda: queue_state("python-sdk"),
        "queue.list": lambda: [q.name for q in client.queue.list()],
        "queue.pause": lambda: client.queue.pause("python-sdk"),
        "queue.get (paused)": lambda: queue_state("python-sdk"),
        "message.enqueue_json": lambda: client.message.enqueue_json(
            queue="python-sdk", url=hook("ok"), body={"check": "enqueue"}
        ).message_id,
        "queue.resume": lambda: client.queue.resume("python-sdk"),
        "queue.get (resumed)": lambda: queue_state("python-sdk"),
        "queue.delete": lambda: client.queue.delete("python-sdk"),
        "queue.list (deleted)": lambda: [q.name for q in client.queue.list()],
        # Paused first: a key with no message, pause or pin left is forgotten, so a call after its
        # message was delivered could meet a 404.
        "flow_control.pause": lambda: client.flow_control.pause(fc["key"]),
        "message.publish_json(flow_control)": lambda: client.message.publish_json(
            url=hook("ok"), body={"check": "flow-control"}, flow_control=fc
        ).message_id,
        "flow_control.get": lambda: flow_control_state(fc["key"]),
        "flow_control.get_global_parallelism": lambda: (
            lambda info: {"max": info.parallelism_max, "count": info.parallelism_count}
        )(client.flow_control.get_global_parallelism()),
        "flow_control.pin": lambda: client.flow_control.pin(fc["key"], {"parallelism": 2}),
        "flow_control.get (pinned)": lambda: flow_control_state(fc["key"]),
        "flow_control.resume": lambda: client.flow_control.resume(fc["key"]),
        "flow_control.get (resumed)": lambda: flow_control_state(fc["key"]),
        "flow_control.reset_rate": lambda: client.flow_control.reset_rate(fc["key"]),
        "flow_control.unpin": lambda: client.flow_control.unpin(fc["key"], {"parallelism": True}),
        "schedule.list": lambda: [s.schedule_id for s in client.schedule.list()],
        "signing_key.get": lambda: (lambda key: {"current": key.current, "next": key.next})(
            client.signing_key.get()
        ),
        "message.cancel_all": cancel_all_with_one_delayed,
    }
    answers = {}
    for name, call in calls.items():
        try:
            answers[name] = {"value": call()}
        except Exception as err:
            answers[name] = {"error": f"{type(err).__name__}: {err}"}
    return answers


CHECKS = {
    "publish": check_publish,
    "batchWithoutQueue": check_batch_without_queue,
    "pendingMessages": check_pending_messages,
    "deadLetters": check_dead_letters,
    "scheduleFlowControl": check_schedule_flow_control,
    "deleteMissingUrlGroup": check_delete_missing_url_group,
    "events": check_events,
    "otherCalls": check_other_calls,
}


def main():
    results = {}
    for name, check in CHECKS.items():
        try:
            results[name] = {"value": check()}
        except Exception as err:  # reported per check, so the other checks still run
            traceback.print_exc(file=sys.stderr)
            results[name] = {"error": f"{type(err).__name__}: {err}"}
    print(json.dumps(results))


main()
