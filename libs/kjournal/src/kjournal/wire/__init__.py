"""The Kafka wire format of kafka-journal (Scala library, 11.x): records, headers, containers.

Pure, synchronous codecs; no Kafka client here. See docs/wire-format.md.
"""

from kjournal.wire.action_header import decode_action_header
from kjournal.wire.action_header import encode_action_header
from kjournal.wire.binary_container import decode_binary_container
from kjournal.wire.binary_container import encode_binary_container
from kjournal.wire.events import decode_events
from kjournal.wire.events import encode_events
from kjournal.wire.json_container import decode_json_container
from kjournal.wire.json_container import encode_json_container
from kjournal.wire.metadata_json import header_metadata_from_json
from kjournal.wire.metadata_json import header_metadata_to_json
from kjournal.wire.metadata_json import payload_metadata_from_json
from kjournal.wire.metadata_json import payload_metadata_to_json
from kjournal.wire.metadata_json import record_metadata_from_json
from kjournal.wire.metadata_json import record_metadata_to_json
from kjournal.wire.partitioner import murmur2
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import ProducerRecordParts
from kjournal.wire.record import append_action
from kjournal.wire.record import decode_action_record
from kjournal.wire.record import encode_action
from kjournal.wire.record import timestamp_from_ms
from kjournal.wire.record import timestamp_to_ms

__all__ = [
    "ConsumedRecord",
    "ProducerRecordParts",
    "append_action",
    "decode_action_header",
    "decode_action_record",
    "decode_binary_container",
    "decode_events",
    "decode_json_container",
    "encode_action",
    "encode_action_header",
    "encode_binary_container",
    "encode_events",
    "encode_json_container",
    "header_metadata_from_json",
    "header_metadata_to_json",
    "murmur2",
    "partition_for",
    "payload_metadata_from_json",
    "payload_metadata_to_json",
    "record_metadata_from_json",
    "record_metadata_to_json",
    "timestamp_from_ms",
    "timestamp_to_ms",
]
