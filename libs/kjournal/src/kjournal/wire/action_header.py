"""The `journal.action` Kafka tailer: one JSON object keyed by the action kind.

    {"append":{"range":{"from":1,"to":5},"origin":"host","version":"11.0.0","payloadType":"json",
               "metadata":{"data":...}}}
    {"delete":{"to":3,"origin":"host","version":"11.0.0"}}
    {"purge":{"origin":"host"}}
    {"mark":{"id":"uuid","origin":"host"}}

`origin` and `version` are omitted when absent. An append's condition, kjournal's own, is
`"expectedSeqNr"` (omitted when the append has none; the Scala library ignores the field). Reading tries append, mark, delete, purge in that
order and takes the first whose value is a JSON object; a header naming none of them (a future
action kind, or not an object at all) reads as None so that old readers skip it.
"""

from __future__ import annotations

from collections.abc import Callable

from kjournal.errors import HeaderFormatError
from kjournal.errors import InvalidInput
from kjournal.model import ActionHeader
from kjournal.model import AppendHeader
from kjournal.model import DeleteHeader
from kjournal.model import HeaderMetadata
from kjournal.model import JsonValue
from kjournal.model import MarkHeader
from kjournal.model import PayloadType
from kjournal.model import PurgeHeader
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import seq_nr
from kjournal.wire import json_text
from kjournal.wire.metadata_json import header_metadata_from_value
from kjournal.wire.metadata_json import header_metadata_to_value

_RECORD_PAYLOAD_TYPES = {"binary": PayloadType.BINARY, "json": PayloadType.JSON}
_EMPTY_HEADER_METADATA = HeaderMetadata()


def encode_action_header(header: ActionHeader) -> bytes:
    """UTF-8 JSON bytes of the header, field for field as the Scala library writes them."""
    body: dict[str, JsonValue]
    if isinstance(header, AppendHeader):
        if header.payload_type not in (PayloadType.BINARY, PayloadType.JSON):
            raise InvalidInput(
                f"an append's payloadType is binary or json, not {header.payload_type}"
            )
        range_: dict[str, JsonValue] = {"from": header.range.from_, "to": header.range.to}
        body = {"range": range_}
        _put_origin_version(body, header.origin, header.version)
        body["payloadType"] = header.payload_type.value
        body["metadata"] = header_metadata_to_value(header.metadata)
        if header.expect is not None:
            body["expectedSeqNr"] = header.expect
        name = "append"
    elif isinstance(header, MarkHeader):
        body = {"id": header.id}
        _put_origin_version(body, header.origin, header.version)
        name = "mark"
    elif isinstance(header, DeleteHeader):
        body = {"to": header.to}
        _put_origin_version(body, header.origin, header.version)
        name = "delete"
    else:
        body = {}
        _put_origin_version(body, header.origin, header.version)
        name = "purge"
    try:
        return json_text.dump_bytes({name: body})
    except ValueError as exc:
        raise InvalidInput(f"cannot encode the {name} header: {exc}") from exc


def decode_action_header(data: bytes) -> ActionHeader | None:
    """The header, or None for an unknown action kind; HeaderFormatError if it is not valid."""
    try:
        root = json_text.loads(data)
    except ValueError as exc:
        raise HeaderFormatError(f"journal.action header is not UTF-8 JSON: {exc}") from exc
    if not isinstance(root, dict):
        return None
    for name, read in _READERS:
        body = root.get(name)
        if isinstance(body, dict):
            try:
                return read(body)
            except (ValueError, InvalidInput) as exc:
                raise HeaderFormatError(f"invalid {name} in journal.action header: {exc}") from exc
    return None


def _read_append(body: dict[str, JsonValue]) -> AppendHeader:
    range_ = body.get("range")
    if not isinstance(range_, dict):
        raise ValueError("range must be an object {from, to}")
    payload_type = _RECORD_PAYLOAD_TYPES.get(_required_str(body, "payloadType"))
    if payload_type is None:
        raise ValueError(f"payloadType must be binary or json, got {body.get('payloadType')!r}")
    metadata = body.get("metadata")
    return AppendHeader(
        range=SeqRange(_seq_nr(range_, "from"), _seq_nr(range_, "to")),
        payload_type=payload_type,
        # Legacy writers: a missing or non-object metadata is empty metadata.
        metadata=(
            header_metadata_from_value(metadata)
            if isinstance(metadata, dict)
            else _EMPTY_HEADER_METADATA
        ),
        origin=_optional_str(body, "origin"),
        version=_optional_str(body, "version"),
        expect=_expect(body),
    )


def _expect(body: dict[str, JsonValue]) -> int | None:
    """The append's condition: absent (None), 0 or a seqNr."""
    value = body.get("expectedSeqNr")
    if value is None:
        return None
    expect = json_text.read_long(value, "expectedSeqNr")
    return 0 if expect == 0 else seq_nr(expect)


def _read_mark(body: dict[str, JsonValue]) -> MarkHeader:
    return MarkHeader(
        id=_required_str(body, "id"),
        origin=_optional_str(body, "origin"),
        version=_optional_str(body, "version"),
    )


def _read_delete(body: dict[str, JsonValue]) -> DeleteHeader:
    return DeleteHeader(
        to=_seq_nr(body, "to"),
        origin=_optional_str(body, "origin"),
        version=_optional_str(body, "version"),
    )


def _read_purge(body: dict[str, JsonValue]) -> PurgeHeader:
    return PurgeHeader(origin=_optional_str(body, "origin"), version=_optional_str(body, "version"))


_READERS: tuple[tuple[str, Callable[[dict[str, JsonValue]], ActionHeader]], ...] = (
    ("append", _read_append),
    ("mark", _read_mark),
    ("delete", _read_delete),
    ("purge", _read_purge),
)


def _put_origin_version(
    body: dict[str, JsonValue], origin: str | None, version: str | None
) -> None:
    if origin is not None:
        body["origin"] = origin
    if version is not None:
        body["version"] = version


def _required_str(body: dict[str, JsonValue], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {value!r}")
    return value


def _optional_str(body: dict[str, JsonValue], name: str) -> str | None:
    value = body.get(name)
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"{name} must be a string, got {value!r}")


def _seq_nr(body: dict[str, JsonValue], name: str) -> SeqNr:
    return seq_nr(json_text.read_long(body.get(name), name))
