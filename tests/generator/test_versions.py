"""Versioned payloads in generated code: old shapes, upgrade stubs, and the chain 1 -> 2 -> 3.

The declaration keeps the shapes of versions 1 and 2; venturi-gen generates
their dataclasses and one user-owned stub per step. The stubs are filled in
the way a user would, and the generated task then decodes documents of every
version (in a fresh interpreter, so that kinds registered here meet no other
test's), with clear errors for a version it does not know, an upgrade that
fails and an upgrade that returns the wrong shape.
"""

from __future__ import annotations

import pytest

from .conftest import Project

DECL = """
venturi: 1
module: shop
tasks:
  SendReceipt:
    kind: shop.send_receipt
    aliases: [shop.receipt]
    version: 3
    payload:
      order_id: int
      note: optional[string]
    carry:
      sent: {type: int, default: 0}
    upgrades:
      v1:
        doc: Version 2 dropped the e-mail address.
        payload:
          order_id: int
          email: string
        carry:
          attempts: {type: int, default: 0}
      v2:
        payload:
          order_id: string
"""

STEP_1 = '''
from __future__ import annotations

from shop.tasks import SendReceiptCarry, SendReceiptCarryV1, SendReceiptV1, SendReceiptV2


def upgrade_payload(old: SendReceiptV1) -> SendReceiptV2:
    return SendReceiptV2(order_id=str(old.order_id))


def upgrade_carry(old: SendReceiptCarryV1) -> SendReceiptCarry:
    return SendReceiptCarry(sent=old.attempts)
'''

STEP_2 = '''
from __future__ import annotations

from shop.tasks import SendReceipt, SendReceiptV2


def upgrade_payload(old: SendReceiptV2) -> SendReceipt:
    return SendReceipt(order_id=int(old.order_id))
'''


@pytest.fixture
def versioned(project: Project) -> Project:
    project.write("t.yaml", DECL)
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    return project


def _run(project: Project, code: str) -> str:
    result = project.python(code)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_generated_stubs_say_what_to_write(versioned: Project) -> None:
    first = versioned.read("upgrades/send_receipt_from_v1.py")
    assert first.startswith(
        "# venturi-gen upgrade stub for task SendReceipt from version 1 of shop. This file is yours"
    )
    assert "Version 2 dropped the e-mail address." in first
    assert "def upgrade_payload(old: SendReceiptV1) -> SendReceiptV2:" in first
    assert "    # Not carried over (version 2 has no such field): email\n" in first
    assert "    # return SendReceiptV2(order_id=...)\n" in first
    assert "set order_id (its type changed)" in first
    assert "def upgrade_carry(old: SendReceiptCarryV1) -> SendReceiptCarry:" in first
    assert "    return SendReceiptCarry()\n" in first  # every carry field has a default
    second = versioned.read("upgrades/send_receipt_from_v2.py")
    assert "def upgrade_payload(old: SendReceiptV2) -> SendReceipt:" in second
    assert "upgrade_carry" not in second  # the carry did not change in version 3
    tasks = versioned.read("shop/tasks.py")
    assert '    ALIASES = ("shop.receipt",)\n' in tasks
    assert "    VERSION = 3\n" in tasks


def test_documents_of_every_version_decode_into_the_current_shape(versioned: Project) -> None:
    versioned.write("upgrades/send_receipt_from_v1.py", STEP_1)
    versioned.write("upgrades/send_receipt_from_v2.py", STEP_2)
    out = _run(versioned, """
from shop.tasks import SendReceipt, SendReceiptCarry
assert SendReceipt.decode_payload({"order_id": 7, "email": "a@b"}, 1) == SendReceipt(order_id=7)
assert SendReceipt.decode_payload({"order_id": "8"}, 2) == SendReceipt(order_id=8)
assert SendReceipt.decode_payload({"order_id": 9, "note": "n"}, 3) == SendReceipt(order_id=9, note="n")
assert SendReceipt.decode_payload({"order_id": 9}) == SendReceipt(order_id=9)
assert SendReceipt.decode_carry({"attempts": 2}, 1) == SendReceiptCarry(sent=2)
# Version 2 declared no carry of its own: it stored the current one.
assert SendReceipt.decode_carry({"sent": 4}, 2) == SendReceiptCarry(sent=4)
print(SendReceipt.KIND, SendReceipt.ALIASES, SendReceipt.VERSION)
""")
    assert out == "shop.send_receipt ('shop.receipt',) 3\n"


@pytest.mark.parametrize(
    ("document", "version", "error"),
    [
        ('{"order_id": 7}', 4, "VersionTooNew: $: the payload of kind 'shop.send_receipt' was stored "
         "by version 4, and this code knows versions up to 3: it needs a newer worker"),
        ('{"order_id": 7}', 1, "CodecError: $: missing required field(s): email"),
        ('{"order_id": "x"}', 2, "UpgradeError: $: the upgrade of the payload of kind "
         "'shop.send_receipt' from version 2 raised ValueError: invalid literal for int()"),
        ('{"order_id": 7}', 0, "CodecError: $: the payload of kind 'shop.send_receipt' has an invalid "
         "version 0"),
    ],
)  # fmt: skip
def test_documents_that_cannot_be_upgraded_are_clear_codec_errors(
    versioned: Project, document: str, version: int, error: str
) -> None:
    versioned.write("upgrades/send_receipt_from_v1.py", STEP_1)
    versioned.write("upgrades/send_receipt_from_v2.py", STEP_2)
    out = _run(versioned, f"""
from venturi import CodecError
from shop.tasks import SendReceipt
try:
    SendReceipt.decode_payload({document}, {version})
except CodecError as exc:
    print(f"{{type(exc).__name__}}: {{exc}}")
""")
    assert out.startswith(error), out


def test_an_upgrade_that_returns_the_wrong_shape_is_caught(versioned: Project) -> None:
    versioned.write("upgrades/send_receipt_from_v1.py", STEP_1.replace(
        "return SendReceiptV2(order_id=str(old.order_id))", "return SendReceipt(order_id=old.order_id)  # type: ignore"
    ).replace("SendReceiptV2\n", "SendReceiptV2, SendReceipt\n"))  # fmt: skip
    versioned.write("upgrades/send_receipt_from_v2.py", STEP_2)
    out = _run(versioned, """
from venturi import UpgradeError
from shop.tasks import SendReceipt
try:
    SendReceipt.decode_payload({"order_id": 7, "email": "a@b"}, 1)
except UpgradeError as exc:
    print(exc)
""")
    assert out == (
        "$: the upgrade of the payload of kind 'shop.send_receipt' from version 1 returned "
        "SendReceipt, expected SendReceiptV2\n"
    )


def test_an_unfilled_stub_is_an_upgrade_error_that_says_what_to_write(versioned: Project) -> None:
    out = _run(versioned, """
from venturi import UpgradeError
from shop.tasks import SendReceipt
try:
    SendReceipt.decode_payload({"order_id": 7, "email": "a@b"}, 1)
except UpgradeError as exc:
    print(exc)
""")
    assert "raised NotImplementedError: upgrade_payload of SendReceipt from version 1: set order_id" in out


def test_a_dropped_step_leaves_its_stub_reported_as_orphaned(versioned: Project) -> None:
    versioned.write("t.yaml", DECL.replace("""      v2:
        payload:
          order_id: string
""", ""))  # fmt: skip
    result = versioned.gen("t.yaml")
    assert result.code == 0, result.err
    assert (
        "upgrades/send_receipt_from_v2.py:1:1: warning[ORPHANED_STUB]: upgrade stub for task "
        "SendReceipt from version 2, which shop no longer declares; move your code elsewhere and "
        "delete the file, or declare the step in the task's upgrades again"
    ) in result.err
    assert (versioned.root / "upgrades/send_receipt_from_v2.py").exists()


def test_a_step_past_a_version_without_a_shape_says_where_it_leads(project: Project) -> None:
    # Version 3 declares only v1: version 2 stored version 3's shape (a version without a
    # step stored the same shape as the next one), so the step from 1 returns the current one.
    project.write("t.yaml", """
    venturi: 1
    module: shop
    tasks:
      Ship:
        kind: ship
        version: 3
        payload:
          order_id: int
        upgrades:
          v1:
            payload:
              order: int
    """)
    assert project.gen("t.yaml").code == 0
    stub = project.read("upgrades/ship_from_v1.py")
    assert '"""Upgrades Ship jobs (ship) stored by version 1 to version 3 (the current one).\n' in stub
    words = " ".join(stub.split())
    assert "Version 2 declares no shape of its own under ``upgrades``: it stored the same as version 3." in words
    assert "to version 2" not in stub
    assert "def upgrade_payload(old: ShipV1) -> Ship:" in stub
    assert '"""The payload of Ship stored by version 1, as version 3 declares it.' in stub
