"""The facts of `engram bench recall --shape users|one-scope` and `engram bench scale`: the same kind of data
as the side-by-side harness (``../shared/peers/common.py``), generated for any size up to millions.

Each fact is one (person, attribute) pair stated by one of ten templates; each query asks the template's
question about one person, so it has exactly one gold fact. Facts belong to 1,000 users with Zipf-skewed
sizes (rank ** -0.5). Gold facts are drawn from the first ``real`` facts (those embedded with the real
model; the rest get synthetic vectors, ``shapes``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

TEMPLATES: list[tuple[str, str, list[str]]] = [
    ("{n} prefers {x} for breakfast.", "What does {n} like to eat in the morning?",
     ["oatmeal", "croissants", "miso soup", "scrambled eggs", "yogurt with berries", "pancakes", "toast and jam",
      "congee"]),
    ("{n} is allergic to {x}.", "Which allergy does {n} have?",
     ["peanuts", "shellfish", "cats", "pollen", "penicillin", "gluten", "latex", "bee stings"]),
    ("{n} lives in {x}.", "Where is {n}'s home?",
     ["Lisbon", "Nairobi", "Osaka", "Toronto", "Reykjavik", "Buenos Aires", "Krakow", "Hanoi"]),
    ("{n} works as a {x}.", "What is {n}'s job?",
     ["nurse", "carpenter", "data analyst", "pilot", "chef", "lawyer", "teacher", "photographer"]),
    ("{n}'s favourite sport is {x}.", "Which sport does {n} enjoy most?",
     ["tennis", "rock climbing", "cricket", "swimming", "basketball", "cycling", "fencing", "surfing"]),
    ("{n} is learning to play the {x}.", "Which instrument is {n} practising?",
     ["violin", "piano", "drums", "cello", "guitar", "flute", "saxophone", "harp"]),
    ("{n} drives a {x}.", "What car does {n} own?",
     ["red Toyota", "blue Volvo", "grey Tesla", "green Fiat", "black BMW", "white Honda", "yellow Mini",
      "silver Audi"]),
    ("{n} has a pet {x}.", "What animal does {n} keep at home?",
     ["parrot", "beagle", "goldfish", "tortoise", "rabbit", "siamese cat", "hamster", "iguana"]),
    ("{n}'s birthday is in {x}.", "When does {n} celebrate a birthday?",
     ["January", "March", "May", "July", "August", "October", "November", "December"]),
    ("{n} is reading a book about {x}.", "What topic is {n}'s current book on?",
     ["ancient Rome", "quantum physics", "gardening", "jazz history", "sailing", "mushrooms", "chess openings",
      "volcanoes"]),
]  # fmt: skip

FIRST = ["Alice", "Bob", "Carmen", "Deepak", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Amara", "Bruno", "Chloe", "Dmitri",
         "Esme", "Felix", "Gita", "Hassan", "Ingrid", "Jun", "Kai", "Leila", "Marco", "Noor", "Oscar", "Paula",
         "Rahul", "Sofia", "Theo", "Uma"]  # fmt: skip
LAST = ["Silva", "Okafor", "Tanaka", "Novak", "Haddad", "Larsen", "Moreau", "Petrova", "Quispe", "Walsh", "Berg",
        "Costa", "Dubois", "Eze", "Fischer", "Garcia", "Ivanova", "Jensen", "Kowalski", "Lindqvist", "Mbeki",
        "Nakamura", "Oliveira", "Rossi", "Sato"]  # fmt: skip
INITIALS = [chr(c) for c in range(ord("A"), ord("Z") + 1)]
QUERIES = 200
USERS = 1000


@dataclass(frozen=True)
class Facts:
    docs: list[str]
    users: list[str]  # each fact's user
    queries: list[tuple[str, int]]  # (question, index of its one gold fact)


def person(k: int) -> str:
    """The k-th person: first name, middle initial, surname (a double-barrelled one past the plain ones)."""
    k, first = divmod(k, len(FIRST))
    k, initial = divmod(k, len(INITIALS))
    k, last = divmod(k, len(LAST))
    surname = LAST[last] if k == 0 else f"{LAST[last]}-{LAST[(k - 1) % len(LAST)]}"
    if k > len(LAST):
        raise ValueError("more people asked for than the name parts can make")
    return f"{FIRST[first]} {INITIALS[initial]}. {surname}"


def people_count() -> int:
    return len(FIRST) * len(INITIALS) * len(LAST) * (len(LAST) + 1)


def user_sizes(n: int, users: int, s: float = 0.5) -> list[int]:
    """Zipf-skewed sizes (rank ** -s) that add up to n."""
    weights = [1.0 / (r**s) for r in range(1, users + 1)]
    total = sum(weights)
    sizes = [max(1, int(n * w / total)) for w in weights]
    i = 0
    while sum(sizes) < n:
        sizes[i % users] += 1
        i += 1
    while sum(sizes) > n:  # only for n below the number of users
        j = max(range(users), key=sizes.__getitem__)
        sizes[j] -= 1
    return sizes


# The facts walk the (person, template) pairs in a fixed scrambled order (i -> (STEP * i + START) mod pairs,
# a permutation since STEP shares no factor with the number of pairs), so the first k facts of any size are
# the same: their vectors are computed once for every size. The first 260,000 are the people with one
# surname (as in the side-by-side harness's 100,000), the double-barrelled ones only after them.
STEP = 4_256_249
START = 1_234_567


def fact(i: int) -> tuple[str, str]:
    """The i-th fact and its question."""
    single = len(FIRST) * len(INITIALS) * len(LAST) * len(TEMPLATES)
    if i < single:
        code = (STEP * i + START) % single
    else:
        code = single + (STEP * (i - single) + START) % (people_count() * len(TEMPLATES) - single)
    who, t = divmod(code, len(TEMPLATES))
    name = person(who)
    values = TEMPLATES[t][2]
    value = values[((code * 2_654_435_761) >> 16) % len(values)]
    return TEMPLATES[t][0].format(n=name, x=value), TEMPLATES[t][1].format(n=name)


MAX_FACTS = people_count() * len(TEMPLATES)  # the distinct facts there are


def make_facts(n: int, *, real: int | None = None, users: int = USERS, queries: int = QUERIES, seed: int = 7) -> Facts:
    """``n`` distinct facts over ``users`` users, and ``queries`` questions whose gold facts lie among the
    first ``real`` facts (default: all)."""
    if n > MAX_FACTS:
        raise ValueError(f"at most {MAX_FACTS} facts")
    rng = random.Random(seed)
    made = [fact(i) for i in range(n)]
    owners = [f"u{u:04d}" for u, size in enumerate(user_sizes(n, users)) for _ in range(size)]
    rng.shuffle(owners)
    gold = rng.sample(range(min(n, real or n)), min(queries, n))
    return Facts([d for d, _ in made], owners, [(made[i][1], i) for i in gold])
