# venturi-gen handler stub for task SealedNote of tests.sensitive.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of sensitive_test.sealed_note jobs (SealedNote): completes at once.

PlainNote with its one field sensitive, for the encryption benchmark.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from tests.sensitive.generated.tasks import SealedNote
from tests.sensitive.generated.worker import SealedNoteHandlerBase


class SealedNoteHandler(SealedNoteHandlerBase[object]):
    async def handle(self, task: SealedNote, ctx: Context[NoCarry], state: object) -> Outcome[None]:
        return Outcome.completed()
