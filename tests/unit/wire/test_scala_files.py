"""Our golden binary files are byte for byte the Scala library's files of the same name.

kafka-journal's `journal/src/test/resources/com/evolution/kafka/journal/*.bin` (commit
af9e7e8a5115a272c5f8a5c4fa91b45f7f578412) are identified here by their git blob ids, so the
comparison needs neither their bytes nor the Scala repository; ours are written by
tests/fixtures/wire/make_fixtures.py from the format description, and every one of them that
holds an event with five tags has them in Scala's hash-set order (wire/tag_order.py).
"""

from __future__ import annotations

import hashlib

import pytest

from tests.unit.wire import catalog

SCALA_BLOBS = {
    "Payload-binary-many.bin": "1b679f90394d197b2b2e230c212e1937ca5f2335",
    "Payload-binary.bin": "f4d80576a532ba87dbd3c1955202df3ea3b1b1c1",
    "Payload-empty-binary-text-json.bin": "c53ae2b2683db588ab9d9e66447b55b10defb614",
    "v0-events-binary-many.bin": "f13cf959843c6ff5b43703eb5437019871032aa5",
    "v0-events-binary.bin": "196803a6bf395952af3c729c019e53ccae073287",
    "v0-events-empty-binary-text-json.bin": "b3033849003cf4b7e111740815b2d35b6ac7edca",
    "v0-events-empty-many.bin": "2edc16a01be4711d9fde5c96d624cad96d11a3a7",
    "v0-events-empty.bin": "59d01a756863f7b2691f18519eac7bc3fda9a897",
    "v0-events-json-many.bin": "1dd56c734af2d71567e08f0e405ca1791ca5cfc0",
    "v0-events-json.bin": "7e93891bbc2ff0e6352eab275bf50dfb182ae12b",
    "v0-events-text-many.bin": "1b143ea9505e313edc3ce27fb52b9e4284d3953a",
    "v0-events-text.bin": "8222e83996c7ccf961a4d8ec87e170d16ff69640",
    "v1-events-binary-many.bin": "dfb1b4cfb35b63774dedc75c36914a4d48101ea9",
    "v1-events-binary.bin": "71bf008e5f31fb08e35fd3977857a749498a0ce9",
    "v1-events-empty-binary-text-json.bin": "c53ae2b2683db588ab9d9e66447b55b10defb614",
    "v1-events-empty-many.bin": "8b67e9cc0875979d942eb73f67e7529632800eac",
    "v1-events-empty.bin": "659fc827785569641e91f0c45e3c65f134344294",
    "v1-events-json-many.bin": "df2a7041884c69dd75cc304dffc880b4cbc0e3a7",
    "v1-events-json.bin": "971fa514c494e5be97a9e60773ac0f296efd412b",
    "v1-events-text-many.bin": "9e4f9459a938a658d5a3ba109f42078da0e8dc7f",
    "v1-events-text.bin": "5d8d21e34c3de5499ba24745c846ea964eeb3fe0",
}


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@pytest.mark.parametrize(("name", "blob"), SCALA_BLOBS.items())
def test_the_file_is_the_scala_file(name: str, blob: str):
    assert git_blob_id(catalog.read(name)) == blob


def test_every_binary_file_of_a_scala_name_is_compared():
    ours = {path.name for path in catalog.FIXTURES.glob("*.bin")}
    assert ours - set(SCALA_BLOBS) == {"Payload-binary-json-null.bin"}  # ours alone
