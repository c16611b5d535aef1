# venturi-gen handler stub for task RefreshRates of examples.reports.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of refresh_rates jobs (RefreshRates).

Refresh the exchange rates the reports use.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from examples.reports.generated.tasks import RefreshRates
from examples.reports.generated.worker import RefreshRatesHandlerBase
from examples.reports.state import Reports


class RefreshRatesHandler(RefreshRatesHandlerBase[Reports]):
    async def handle(
        self, task: RefreshRates, ctx: Context[NoCarry], state: Reports
    ) -> Outcome[None]:
        state.refreshes += 1
        return Outcome.completed()
