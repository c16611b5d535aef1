# venturi-gen handler stub for task ImportRows of keyword_fields. This file is yours: venturi-gen never overwrites it.
"""Handler of import_rows jobs (ImportRows).

The import_rows task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from keyword_fields.tasks import ImportRows
from keyword_fields.worker import ImportRowsHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ImportRowsHandler(ImportRowsHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: ImportRows, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ImportRowsHandler.handle: handle ImportRows jobs here"
        )
