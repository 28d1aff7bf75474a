"""Benign memories as agents store them, generated from templates: the injection classifier's hard negatives.

Support, coding and research agents keep preferences ("prefers to be contacted by email"), procedures
("to reset a password: open ..., then ..."), standing instructions from their users ("always CC the account
manager"), decisions, tool results and notes. Much of that is imperative and mentions sending, replying,
forwarding and contacting, which is what an exfiltration attack says too; a classifier that has only seen
chat turns quarantines them. Written without looking at ``engram.bench.texts``, whose templates measure the
false-positive rate on such memories (``engram eval policy``).
"""

from __future__ import annotations

import random

from engram.policy.attack_templates import distinct, fill

_TEMPLATES = [
    # Preferences and contact.
    "{name} prefers to be contacted by {channel}, never by {channel2}.",
    "{name} wants all invoices sent to {email} rather than to the generic billing address.",
    "Best way to reach {name}: {channel} before {time}; {pronoun} does not read {channel2} at weekends.",
    "{name} asked us to stop sending the weekly newsletter and to keep only the {report} report.",
    "{name}'s preferred language for replies is {language}; keep answers short and skip the small talk.",
    "{email} is the billing contact for {company}; CC {name} on anything about renewals.",
    "When {name} writes about {topic}, reply within one business day and copy the account manager.",
    "{name} dislikes phone calls and would rather get a written summary by {channel}.",
    # Standing instructions from users.
    "Always attach the PDF invoice when replying to {company} about payments.",
    "Never promise a delivery date to {company} without checking the warehouse dashboard first.",
    "Do not share internal ticket numbers with {company}; refer to their own order reference instead.",
    "Ignore the duplicate alerts from the {service} staging cluster; they are known and tracked in {ticket}.",
    "Forward any message from {company} about {topic} to {name} on the legal team.",
    "Send the monthly usage export to {email} on the first business day of each month.",
    "Use British spelling in every document for {company}, and their logo only on the cover page.",
    "Keep {name} out of the loop on pricing until the contract is signed.",
    # Procedures.
    "To reset a customer's password: open the admin console, search the account, click reset, then tell "
    "them to check {channel}.",
    "To issue a refund: confirm the order {order}, check it is within 30 days, approve it in the billing "
    "tool, then email the receipt.",
    "Deploy procedure for {service}: run the tests, tag the release, deploy to staging, wait {minutes} "
    "minutes, then promote to production.",
    "Step {step}: export the report from {service}, remove the test accounts, and upload it to the shared "
    "drive for {name}.",
    "If the {service} health check fails twice, restart the worker, clear the queue, and page the on-call engineer.",
    "Onboarding checklist for {name}: create the accounts, send the welcome email, book the intro call, "
    "assign a buddy.",
    "When a customer reports error {code}, ask for the request id, look it up in the logs, and reply with the cause.",
    "Release notes go to {email} first for review, then to the public changelog.",
    # Decisions, facts, results, notes.
    "Decision: {company} moves to the annual plan from {month}; discount agreed at {percent}%.",
    "The {service} API rate limit is {number} requests per minute per key; batch writes above that.",
    "Tool result: {service} returned {code} for order {order}; retried after {minutes} minutes and it succeeded.",
    "{name} confirmed that the shipping address for order {order} is correct.",
    "The build for {service} fails on Python 3.10 because of a typing import; pin 3.11 in CI.",
    "Research note: the {topic} paper reports a {percent}% improvement, but only on the English subset.",
    "Open question for {name}: should the {report} report include cancelled orders?",
    "Blocked: waiting for {company} to send the signed data processing agreement.",
    "{name} said the {service} outage on {month} 3rd cost them two hours of work; they expect a credit.",
    "Remember that {company} is in the {timezone} time zone; schedule calls after 3 pm for them.",
    "The user prefers code examples in {language2} and explanations without jargon.",
    "For this repository, run `make test` before committing and keep functions under 40 lines.",
    "Summary of the call with {name}: they will send the sample data by {month}; we owe them a quote.",
    "{name} reported that {service} logs them out every hour; reproduced on {browser}.",
]
_SLOTS = {
    "name": ["Jane", "Omar Haddad", "PERSON_A", "PERSON_C", "Priya", "Mr. Okafor", "Lena Vogel", "PERSON_AB",
             "the CFO", "our contact at the bank"],
    "pronoun": ["she", "he", "they"],
    "channel": ["email", "Slack", "phone", "SMS", "the support portal", "Teams", "WhatsApp"],
    "channel2": ["phone", "email", "Slack", "text message", "voicemail"],
    "email": ["EMAIL_1", "EMAIL_4", "billing@acme.example", "jane.doe@example.com", "EMAIL_12"],
    "company": ["Acme", "Globex", "Initech", "the Berlin office", "Umbrella Health", "Northwind"],
    "report": ["sales", "churn", "usage", "incident", "finance"],
    "language": ["German", "French", "Spanish", "English", "Japanese"],
    "language2": ["Python", "TypeScript", "Go", "Rust"],
    "topic": ["billing", "data retention", "the migration", "GDPR requests", "their API keys", "refunds"],
    "service": ["billing", "search", "checkout", "auth", "ingest", "notifications"],
    "ticket": ["OPS-1142", "JIRA-883", "ticket 5521", "#4410"],
    "order": ["A-1007", "88213", "INV-77", "PO-5530"],
    "minutes": ["5", "10", "15", "30"],
    "step": ["2", "3", "4", "7"],
    "code": ["502", "504", "429", "401", "E1234"],
    "month": ["March", "June", "September", "November"],
    "percent": ["5", "10", "12", "20"],
    "number": ["60", "600", "1,000", "120"],
    "timezone": ["Pacific", "Central European", "Singapore", "Eastern"],
    "browser": ["Safari", "Firefox", "Chrome on Android"],
    "time": ["9 am", "noon", "5 pm"],
}  # fmt: skip


def agent_memories(n: int = 2000, seed: int = 41) -> list[str]:
    """``n`` distinct benign memories of the kinds agents store."""
    rnd = random.Random(seed)  # noqa: S311 - a reproducible corpus, not a secret
    return distinct(n, lambda: fill(rnd, rnd.choice(_TEMPLATES), _SLOTS))
