"""The pure personal-data detectors: what each finds, its normal form, and the look-alikes they leave."""

from __future__ import annotations

import pytest

from engram.policy import names
from engram.policy.pii import find_structured, parse_placeholder, placeholder, replace


def kinds(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in find_structured(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mail JANE.Doe+x@Example.co.uk today", [("email", "JANE.Doe+x@Example.co.uk")]),
        ("call +44 20 7946 0958 or (212) 736-5000", [("phone", "+44 20 7946 0958"), ("phone", "(212) 736-5000")]),
        ("card 4539-1488-0343-6467 on file", [("card", "4539-1488-0343-6467")]),
        ("pay DE89 3704 0044 0532 0130 00 by Friday", [("iban", "DE89 3704 0044 0532 0130 00")]),
        ("SSN 536-90-4399 on the form", [("national_id", "536-90-4399")]),
        ("her BSN is 111222333", [("national_id", "111222333")]),
        ("CPF 390.533.447-05", [("national_id", "390.533.447-05")]),
        ("server 192.168.1.20 and 2001:db8::1", [("ip", "192.168.1.20"), ("ip", "2001:db8::1")]),
    ],
)
def test_structured_kinds_are_found(text: str, expected: list[tuple[str, str]]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "order 4539148803436468 shipped",  # fails Luhn
        "tracking 1234567890123456",
        "upgrade to version 2.10.0.1 tonight",
        "see Section 12.4.1.7 of the RFC",
        "subnet mask 255.255.255.0",
        "localhost is 127.0.0.1",
        "git remote git@github.com:acme/payments.git",
        "the nine digits 111222333 alone",  # a BSN shape without the word
        "meeting at 10:30:00 in room 4",
        "invoice INV-77 for 1,250.00 EUR",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert kinds(text) == []


def test_normal_forms_make_one_value_of_its_spellings() -> None:
    (a,) = find_structured("write to Jane@Example.org")
    (b,) = find_structured("write to jane@example.ORG")
    assert a.normal == b.normal == "jane@example.org"
    (p,) = find_structured("+1 212-736-5000")
    assert p.normal == "+12127365000"


def test_placeholders_round_trip_and_replace_spans() -> None:
    for kind, n in [("email", 1), ("person", 1), ("person", 26), ("person", 27), ("person", 703), ("ip", 12)]:
        assert parse_placeholder(placeholder(kind, n)) == (kind, n)
    assert [placeholder("person", n) for n in (1, 26, 27)] == ["PERSON_A", "PERSON_Z", "PERSON_AA"]
    text = "mail a@b.org or a@b.org"
    found = find_structured(text)
    assert replace(text, found, {("email", "a@b.org"): "EMAIL_3"}) == "mail EMAIL_3 or EMAIL_3"


ner = pytest.mark.skipif(not names.available(), reason="the ner extra is not installed")


@ner
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline went to the support group with Melanie.", ["Caroline", "Melanie"]),
        ("Dr. Maya Chen approved the refund.", ["Maya Chen"]),
        ("Intern Diego Castillo-Vargas needs a badge by Monday.", ["Diego Castillo-Vargas"]),
        ("Siobhan O'Neill's order is late.", ["Siobhan O'Neill"]),
        ("Mel: I ran a charity race last Saturday!", ["Mel"]),
    ],
)
def test_names_are_found(text: str, expected: list[str]) -> None:
    assert [f.value for f in names.find_names([text])[0]] == expected


@ner
@pytest.mark.parametrize(
    "text",
    [
        "Pat the dough flat before folding it.",
        "Grant access to the shared drive.",
        "Will you send it?",
        "Grace period ends May 3rd.",
        "Victoria station is closed.",
        "Charles River Laboratories supplied the reagents.",
        "Email the report to the team.",
        "PERSON_A prefers email.",
    ],
)
def test_name_look_alikes_are_left_alone(text: str) -> None:
    assert names.find_names([text]) == [[]]


@ner
def test_a_batch_keeps_its_order_around_texts_without_capitals() -> None:
    found = names.find_names(["i met john smith at the station", "Priya Raman called.", "", "log: retry 3 of 5"])
    assert [[f.value for f in each] for each in found] == [[], ["Priya Raman"], [], []]
