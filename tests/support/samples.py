"""Well-formed records the input tests start from (each test breaks one field of them): a
WebArena task and a study's result line."""

from __future__ import annotations

GOOD_TASK = {
    "task_id": 1,
    "intent": "x",
    "sites": ["shopping"],
    "start_url": "__SHOPPING__",
    "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "yes"}},
}


GOOD_RESULT = {
    "id": "miniwob.a.0.occam",
    "benchmark": "miniwob",
    "task": "a",
    "seed": 0,
    "agent": "occam",
    "model": "m",
    "reward": 1.0,
    "success": True,
    "steps": 2,
    "reason": "stop",
    "cost": 0.0,
    "seconds": 1.0,
}
