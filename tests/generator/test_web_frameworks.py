"""A generated task as the request body of a FastAPI endpoint, and through pydantic.

The payload dataclass is the natural request model of the endpoint that enqueues it:
FastAPI (pydantic) reads its annotations, validates the JSON body into it, and the
endpoint enqueues it as it is. Both libraries are the real ones (the dev extra), run in a
fresh interpreter so that the kinds one test registers never meet another's.
"""

from __future__ import annotations

import json

import pytest

from .conftest import Project

pytest.importorskip("fastapi")
pytest.importorskip("pydantic")

DECL = """
venturi: 1
module: shop
types:
  Address:
    fields:
      city: string
      zip: optional[string]
  Speed:
    enum: [slow, fast]
tasks:
  Ship:
    kind: ship
    payload:
      order_id: ulid
      at: datetime
      amount: decimal
      tags: list[string]
      weights: map[int]
      to: Address
      speed: Speed
      note: {type: "optional[string]", default: null}
    dedup: {key: order_id, on_collision: replace}
"""

BODY = {
    "order_id": "01HZX3Y5F2Q7K9M8N6P4R2T0VW",
    "at": "2024-05-01T12:00:00+02:00",
    "amount": "1.50",
    "tags": ["fragile", "gift"],
    "weights": {"box": 3},
    "to": {"city": "Lyon", "zip": None},
    "speed": "fast",
}


@pytest.fixture
def shop(project: Project) -> Project:
    project.write("t.yaml", DECL)
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    return project


def _run(project: Project, code: str) -> str:
    result = project.python(code)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_generated_task_is_a_fastapi_request_body_and_is_enqueued(shop: Project) -> None:
    out = _run(shop, f"""
import json
from fastapi import FastAPI
from fastapi.testclient import TestClient
from venturi import Queue
from shop.tasks import Ship

queue = Queue("sqlite:///jobs.sqlite3")
app = FastAPI()


@app.post("/ship")
def ship(task: Ship) -> dict[str, str]:
    return {{"job_id": str(queue.enqueue(task).job_id)}}


with TestClient(app) as client:
    accepted = client.post("/ship", json={BODY!r})
    assert accepted.status_code == 200, accepted.text
    refused = client.post("/ship", json={{**{BODY!r}, "speed": "warp"}})
    assert refused.status_code == 422, refused.text
info = queue.get(accepted.json()["job_id"], Ship)
queue.close()
print(json.dumps(info.payload.to_json(), sort_keys=True))
print(type(info.payload.tags).__name__, info.payload.to.city)
""")
    stored, shape = out.splitlines()
    assert json.loads(stored) == {**BODY, "note": None}
    assert shape == "tuple Lyon"


def test_pydantic_type_adapter_validates_the_generated_task(shop: Project) -> None:
    out = _run(shop, f"""
import pydantic
from shop.tasks import Address, Ship

adapter = pydantic.TypeAdapter(Ship)
task = adapter.validate_python({BODY!r})
assert isinstance(task, Ship) and isinstance(task.to, Address), task
assert task == Ship.from_json(task.to_json()), task
assert pydantic.TypeAdapter(Address).validate_python({{"city": "Oslo", "zip": "0150"}}) == Address(city="Oslo", zip="0150")
print(task.to_json()["order_id"])
""")
    assert out.strip() == BODY["order_id"]
