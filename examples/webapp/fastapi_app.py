"""The FastAPI app: one ``AsyncQueue`` per process, opened in the lifespan, shared by requests.

    uvicorn --factory examples.webapp.fastapi_app:app_from_env

``VENTURI_DATABASE_URL`` names the queue's database. With ``WEBAPP_ACCOUNTS_URL`` (a
PostgreSQL database, the queue's own or one holding the venturi schema) an account and
its welcome email commit in one transaction of the app's own connection.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from psycopg.errors import UniqueViolation
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel
from venturi import AsyncQueue, JobNotFound

from examples.webapp.generated.tasks import SendWelcome


class SignUp(BaseModel):
    account_id: int
    email: str


def create_app(database: str | None = None, accounts_url: str | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        # One queue for the process, opened before the first request: its connections
        # (or, on SQLite, its thread) are ready, and the schema is migrated.
        async with AsyncQueue(database) as queue:
            app.state.queue = queue
            app.state.accounts = None
            if accounts_url is not None:
                async with AsyncConnectionPool(accounts_url, open=False) as pool:
                    await create_accounts_table(pool)
                    app.state.accounts = pool
                    yield
            else:
                yield
        # Leaving the block closed the queue: the server is shutting down.

    app = FastAPI(lifespan=lifespan)

    @app.post("/accounts", status_code=201)
    async def sign_up(body: SignUp, request: Request) -> dict[str, Any]:
        queue: AsyncQueue = request.app.state.queue
        task = SendWelcome(account_id=body.account_id, email=body.email)
        pool: AsyncConnectionPool[Any] | None = request.app.state.accounts
        if pool is None:
            result = await queue.enqueue(task)
        else:
            # The account and its email job commit together, or neither does.
            try:
                async with pool.connection() as conn, conn.transaction():
                    await conn.execute(
                        "INSERT INTO accounts (id, email) VALUES (%s, %s)", (body.account_id, body.email)
                    )
                    result = await queue.enqueue(task, conn=conn)
            except UniqueViolation:
                raise HTTPException(status_code=409, detail="this account exists") from None
        return {"job_id": result.job_id, "outcome": result.outcome.value}

    @app.get("/jobs/{job_id}")
    async def job(job_id: str, request: Request) -> dict[str, Any]:
        queue: AsyncQueue = request.app.state.queue
        try:
            info = await queue.get(job_id, SendWelcome)
        except JobNotFound:
            raise HTTPException(status_code=404, detail=f"no job {job_id}") from None
        return {"state": info.state.value, "runs": info.run_count, "email": info.payload.email}

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}  # never touches the database

    return app


async def create_accounts_table(pool: AsyncConnectionPool[Any]) -> None:
    async with pool.connection() as conn:
        await conn.execute("CREATE TABLE IF NOT EXISTS accounts (id bigint PRIMARY KEY, email text)")


def app_from_env() -> FastAPI:
    """The factory ``uvicorn --factory`` calls, configured from the environment."""
    return create_app(os.environ.get("VENTURI_DATABASE_URL"), os.environ.get("WEBAPP_ACCOUNTS_URL"))
