"""Test support for kjournal's stores, shipped with the library so that a backend outside this
repository is held to the same contract (the pattern of the `eventsourcing` library's persistence
tests): a pytest suite subclasses `eventual_store.EventualStoreContract` and supplies its
`backend` fixture. `records` builds the action records, Kafka records and expected batches the
contract (and kjournal's own tests) feed to replication.

Nothing in kjournal imports this package; it needs pytest only to run the suites built on it.
"""
