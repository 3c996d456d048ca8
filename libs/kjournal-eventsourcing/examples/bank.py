"""A small `eventsourcing` application whose events live in kjournal (docs/eventsourcing.md).

Against `scripts/dev up` started with `KJOURNAL_DEV_APPLICATION_TOPICS=journal_bank`:

    PERSISTENCE_MODULE=kjournal_eventsourcing KJOURNAL_TOPIC=journal_bank \\
      uv run python libs/kjournal-eventsourcing/examples/bank.py

It opens an account, moves money, takes a snapshot, reads the account back, and prints the
application's notification log and the `kjournal read` command that shows the same events.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import ClassVar
from typing import cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate
from eventsourcing.domain import event


class InsufficientFundsError(Exception):
    pass


class Account(Aggregate):
    @event("Opened")
    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.balance = Decimal("0.00")

    @event("Deposited")
    def deposit(self, amount: Decimal) -> None:
        self.balance += amount

    def withdraw(self, amount: Decimal) -> None:
        if amount > self.balance:
            raise InsufficientFundsError(f"{self.owner} has {self.balance}, not {amount}")
        self._withdrawn(amount)

    @event("Withdrawn")
    def _withdrawn(self, amount: Decimal) -> None:
        self.balance -= amount


class Bank(Application[UUID]):
    snapshotting_intervals: ClassVar = {
        Account: 5
    }  # a snapshot every 5 events (the snapshots topic)

    def open_account(self, owner: str) -> UUID:
        account = Account(owner)
        self.save(account)
        return account.id

    def deposit(self, account_id: UUID, amount: Decimal) -> None:
        account = self._account(account_id)
        account.deposit(amount)
        self.save(account)

    def withdraw(self, account_id: UUID, amount: Decimal) -> None:
        account = self._account(account_id)
        account.withdraw(amount)
        self.save(account)

    def balance(self, account_id: UUID) -> Decimal:
        return self._account(account_id).balance

    def _account(self, account_id: UUID) -> Account:
        return cast(Account, self.repository.get(account_id))


def main() -> int:
    with Bank() as bank:
        account_id = bank.open_account("Ada")
        for amount in ("10.00", "25.50", "4.50", "60.00"):
            bank.deposit(account_id, Decimal(amount))
        bank.withdraw(account_id, Decimal("30.00"))
        try:
            bank.withdraw(account_id, Decimal("1000.00"))
        except InsufficientFundsError as exc:
            print(f"refused: {exc}")
        try:
            bank.balance(UUID(int=0))
        except AggregateNotFoundError:
            print("no account 00000000-0000-0000-0000-000000000000, as expected")
        print(f"account {account_id}: balance {bank.balance(account_id)}")
        print("notification log (id, version, event):")
        last = bank.recorder.max_notification_id() or 0
        for notification in bank.recorder.select_notifications(
            start=None, limit=1_000_000, topics=()
        ):
            if notification.originator_id == account_id:
                print(
                    f"  {notification.id:>12}  {notification.originator_version}  "
                    f"{notification.topic.rsplit('.', 1)[-1]}"
                )
        print(f"max notification id: {last}")
        topic = bank.env.get("KJOURNAL_TOPIC") or "journal"
        print(f"the same events with kjournal's CLI: uv run kjournal read {topic} {account_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
