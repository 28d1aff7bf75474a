"""Where webhooks may go (outbox/targets.py): non-public addresses are refused unless listed, and a list
restricts webhooks to what it names. Addresses are literal here: nothing leaves the machine."""

from __future__ import annotations

import ipaddress

import pytest

from engram.errors import ValidationError
from engram.outbox.targets import Targets


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",  # a cloud's metadata service
        "http://127.0.0.1:5432/",
        "http://[::1]/",
        "http://[::ffff:10.0.0.7]/",  # IPv4 written as IPv6
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
    ],
)
def test_non_public_addresses_are_refused_by_default(url: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Targets().check_url(url)
    assert refused.value.field == "url" and "ENGRAM_WEBHOOK_ALLOWED_HOSTS" in str(refused.value)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.com/", "http:// or https://"),
        ("http:///path", "with a host"),
        ("https://user:pw@example.com/", "credentials"),
        ("http://example.com:notaport/", "not a valid URL"),
    ],
)
def test_malformed_urls_name_the_field(url: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why) as refused:
        Targets().check_url(url)
    assert refused.value.field == "url"


def test_public_addresses_pass_and_a_listed_private_one_too() -> None:
    assert Targets().check_url("https://93.184.216.34/hook") == "93.184.216.34"
    assert Targets().check_url("https://hooks.example.com/x") == "hooks.example.com"  # resolved before sending
    listed = Targets.parse("127.0.0.1, 10.0.0.0/8")
    assert listed.check_url("http://127.0.0.1:8080/hook") == "127.0.0.1"
    assert listed.check_url("http://10.200.0.1/hook") == "10.200.0.1"


def test_a_list_restricts_webhooks_to_what_it_names() -> None:
    only = Targets.parse("hooks.example.com, *.corp.example")
    assert only.check_url("https://hooks.example.com/a") == "hooks.example.com"
    assert only.check_url("https://ci.corp.example/a") == "ci.corp.example"
    for url in ("https://evil.example.org/", "https://93.184.216.34/"):
        with pytest.raises(ValidationError, match="not in ENGRAM_WEBHOOK_ALLOWED_HOSTS"):
            only.check_url(url)
    # A host listed by name may point anywhere; one found only by its addresses must resolve inside the list.
    assert only.refusal("hooks.example.com", [ipaddress.ip_address("10.0.0.1")]) is None
    ranged = Targets.parse("203.0.113.0/24")
    assert ranged.refusal("a.example", [ipaddress.ip_address("203.0.113.9")]) is None
    assert ranged.refusal("a.example", [ipaddress.ip_address("198.51.100.1")]) is not None


async def test_a_name_is_judged_by_what_it_resolves_to_before_each_attempt() -> None:
    why = await Targets().check_before_sending("http://localhost:8080/hook")  # /etc/hosts: no network
    assert why is not None and ("resolves to 127.0.0.1" in why or "resolves to ::1" in why)
    assert await Targets.parse("127.0.0.1,::1").check_before_sending("http://localhost:8080/hook") is None
