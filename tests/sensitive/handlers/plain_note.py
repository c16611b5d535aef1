# venturi-gen handler stub for task PlainNote of tests.sensitive.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of sensitive_test.plain_note jobs (PlainNote): completes at once.

A task with no sensitive field, for the neighbours of sensitive jobs.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from tests.sensitive.generated.tasks import PlainNote
from tests.sensitive.generated.worker import PlainNoteHandlerBase


class PlainNoteHandler(PlainNoteHandlerBase[object]):
    async def handle(self, task: PlainNote, ctx: Context[NoCarry], state: object) -> Outcome[None]:
        return Outcome.completed_with(task.text)
