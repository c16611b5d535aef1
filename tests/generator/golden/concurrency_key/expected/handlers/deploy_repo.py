# venturi-gen handler stub for task DeployRepo of concurrency_key. This file is yours: venturi-gen never overwrites it.
"""Handler of deploy_repo jobs (DeployRepo).

The deploy_repo task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from concurrency_key.tasks import DeployRepo
from concurrency_key.worker import DeployRepoHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class DeployRepoHandler(DeployRepoHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: DeployRepo, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "DeployRepoHandler.handle: handle DeployRepo jobs here"
        )
