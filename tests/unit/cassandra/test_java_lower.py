"""`java_lower_case` against the lower cases Java 17, 21 and 25 printed (tests/fixtures/java_unicode).

Every code point alone, every code point in five sigma contexts, hand-picked ids and 20 000
pseudo-random ids built from characters of every class Java's final-sigma rule tells apart.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any
from typing import get_args

import pytest
from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION
from kjournal.cassandra.java_lower import JavaVersion
from kjournal.cassandra.java_lower import java_case_tables
from kjournal.cassandra.java_lower import java_lower_case
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.settings import CassandraSettings
from pydantic import ValidationError

from tests.support.java_lower_expected import fuzz_differences
from tests.support.java_lower_expected import id_differences
from tests.support.java_lower_expected import single_differences
from tests.support.java_lower_expected import template_differences

FIXTURES = Path(__file__).parents[2] / "fixtures" / "java_unicode"
VERSIONS: tuple[JavaVersion, ...] = get_args(JavaVersion)
TEMPLATES = ["cΣ", "AcΣ", "AΣc", "AccΣ", "1cΣ"]


@cache
def expected(java: JavaVersion) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"java{java}-expected.json").read_text("ascii"))
    return data


def test_the_fixtures_come_from_the_java_they_are_named_after():
    for java in VERSIONS:
        assert expected(java)["java"].split(".")[0] == str(java)
        assert java_case_tables(java).java.split(".")[0] == str(java)
        assert list(expected(java)["templates"]) == TEMPLATES


@pytest.mark.parametrize("java", VERSIONS)
def test_every_code_point_alone_lower_cases_as_in_java(java: JavaVersion):
    assert single_differences(expected(java), java) == []


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("java", VERSIONS)
def test_every_code_point_next_to_a_sigma_as_in_java(java: JavaVersion, template: str):
    edges = expected(java)["templates"][template]
    assert template_differences(template, edges, java) == []


@pytest.mark.parametrize("java", VERSIONS)
def test_hand_picked_ids_as_in_java(java: JavaVersion):
    assert id_differences(expected(java), java) == []


@pytest.mark.parametrize("java", VERSIONS)
def test_final_sigmas_of_pseudo_random_ids_as_in_java(java: JavaVersion):
    assert fuzz_differences(expected(java)["fuzz"], java) == []


def test_the_issue_examples():
    # Java 17 knows no lower case of U+2C2F (Unicode 14); Python 3.11 does.
    assert java_lower_case("\u2c2f", 17) == "\u2c2f"
    assert java_lower_case("\u2c2f", 21) == "\u2c5f"
    # The sigma is final in Java: 's' is cased and U+40BB is a letter of the same word.
    assert java_lower_case("s\u40bb\u03a3") == "s\u40bb\u03c2"
    assert java_lower_case("\u0130") == "i\u0307"


def test_a_high_and_a_low_surrogate_side_by_side_are_one_character_as_in_java():
    assert java_lower_case("\ud801\udc00") == "\U00010428"
    assert java_lower_case("\ud801") == "\ud801"


def test_ascii_is_plain_lower_case():
    assert java_lower_case("Journal-ID-123") == "journal-id-123"


def test_buckets_follow_the_java_version():
    # Ⱟ keeps its case in Java 17 and becomes ⱟ from Java 21 on, so its bucket moves.
    assert metajournal_bucket("\u2c2f", 10_000, 17) == metajournal_bucket("\u2c2f", 10_000)
    assert metajournal_bucket("\u2c2f", 10_000, 21) == metajournal_bucket("\u2c5f", 10_000, 21)
    assert metajournal_bucket("\u2c2f", 10_000, 17) != metajournal_bucket("\u2c2f", 10_000, 21)


def test_unknown_java_versions_are_refused():
    with pytest.raises(ValueError, match="Java 11"):
        java_lower_case("é", 11)  # type: ignore[arg-type]


def test_the_setting_takes_the_java_version_as_text_from_the_environment():
    assert CassandraSettings().java_version == DEFAULT_JAVA_VERSION == 17
    assert CassandraSettings.model_validate({"java_version": "25"}).java_version == 25
    with pytest.raises(ValidationError, match="java_version"):
        CassandraSettings.model_validate({"java_version": "11"})
