"""In a large tenant, the query's words over the postings budget are read together (``lexical._TOGETHER_TERMS``):
one person's facts among thousands that share the first name or the surname."""

from __future__ import annotations

from engram import Engram
from engram.model.recall import RecallRequest
from engram.retrieval.config import RetrievalConfig, preset
from engram.retrieval.filter import build_filter
from engram.retrieval.retrievers import lexical
from tests.retrieval_helpers import lexical_hits, postings_of

LARGE = 10**6  # the corpus size the statement is told: the tenant counts as large


async def seed(engram: Engram) -> list[str]:
    docs = [f"Amara {chr(65 + n % 26)}. Okafor {n} keeps a note about the harbour" for n in range(130)]
    docs += [f"Bruno {chr(65 + n % 26)}. Silva {n} keeps a note about the harbour" for n in range(130)]
    wanted = ["Amara K. Silva lives in Osaka.", "Amara K. Silva drives a red Toyota."]
    await engram.update_admission_policy({"pii": "off"})  # the names are the facts here
    await engram.remember_many([{"content": d} for d in docs + wanted])
    return wanted


async def lexical_contents(engram: Engram, cfg: RetrievalConfig, *queries: str, n_docs: int = LARGE) -> list[list[str]]:
    """The contents lexical recall finds for each query in tenant acme, told it holds ``n_docs`` memories."""
    f = build_filter("acme", RecallRequest(query="x"))
    async with engram.db.tenant("acme") as conn:
        corpus = await engram.retriever.read_corpus(conn, "acme")
        kw = {"avgdl": corpus.avgdl, "fts": corpus.fts_config, "rarest": False}
        found = [await lexical_hits(conn, f, cfg, n_docs=n_docs, query=q, **kw) for q in queries]
    by_id = {m.id: m.content for m in (await engram.list(limit=500)).items}
    return [[by_id[h.id] for h in hits] for hits in found]


async def test_common_words_are_read_together_in_a_large_tenant(engram: Engram) -> None:
    wanted = await seed(engram)
    cfg = preset("hybrid", lexical_postings_budget=100)  # "amara" and "silva": 132 memories each
    f = build_filter("acme", RecallRequest(query="x"))
    query = "Where is Amara Silva's home?"
    async with engram.db.tenant("acme") as conn:
        corpus = await engram.retriever.read_corpus(conn, "acme")
        kw = {"avgdl": corpus.avgdl, "query": query, "fts": corpus.fts_config, "rarest": False}
        small = await lexical_hits(conn, f, cfg, n_docs=corpus.n_docs, **kw)
        large = await lexical_hits(conn, f, cfg, n_docs=LARGE, **kw)
        one = await lexical_hits(conn, f, cfg, n_docs=LARGE, **{**kw, "query": "Where is Amara's home?"})
        unnamed = await lexical_hits(conn, f, cfg, n_docs=LARGE, **{**kw, "query": "the note 17 about the harbour"})
    assert small == []  # a small tenant: its near stop words are left to the dense retrievers, as before
    by_id = {m.id: m.content for m in (await engram.list(limit=500)).items}
    assert sorted(by_id[h.id] for h in large) == sorted(wanted)  # only those holding all of them
    assert all(h.score > 0 and h.row.term_share == 1.0 for h in large)
    assert one == []  # one common word alone is not read: it would be any of its memories
    # No names: the rare word is read as in any tenant, the common ones are not.
    assert sorted(by_id[h.id] for h in unnamed) == sorted(d for d in by_id.values() if " 17 " in d)


async def test_a_third_common_word_narrows_what_the_first_two_hold(engram: Engram) -> None:
    # "amara", "osaka" and "silva" are each in 261 memories (over the budget of 100); "amara" and "osaka"
    # together in 131, of which one also holds "silva": the third word is probed for those the first two hold.
    docs = [f"Amara {chr(65 + n % 26)}. Okafor {n} moved to Osaka" for n in range(130)]
    docs += [f"Bruno {chr(65 + n % 26)}. Silva {n} moved to Osaka" for n in range(130)]
    docs += [f"Amara Silva {n} moved to Lima" for n in range(130)]
    wanted = "Amara Silva moved to Osaka last spring."
    await engram.update_admission_policy({"pii": "off"})
    await engram.remember_many([{"content": d} for d in [*docs, wanted]])
    cfg = preset("hybrid", lexical_postings_budget=100)
    three, held = await lexical_contents(engram, cfg, "Did Amara Silva move to Osaka?", "Did Amara move to Osaka?")
    assert three == [wanted]
    # two words: the best of the 131 that hold both
    assert len(held) == cfg.candidates and all(c.startswith("Amara") and "Osaka" in c for c in held)


async def test_a_name_word_the_budget_left_out_is_read_with_the_others(engram: Engram) -> None:
    # "amara" (60 memories) and "silva" (70) each fit the budget of 100, but not together: the rarer is
    # read whole, the other only where a memory holds the whole name. Reading only the rarer ranks every
    # Amara by her memory's length, the longest (these two) last.
    docs = [f"Amara {chr(65 + n % 26)}. Okafor {n} keeps a note about the harbour" for n in range(58)]
    docs += [f"Bruno {chr(65 + n % 26)}. Silva {n} keeps a note about the harbour" for n in range(68)]
    wanted = [
        "Amara Silva lives in Osaka, in a blue house by the river, with her two cats and a parrot.",
        "Amara Silva drives a red Toyota to the studio on weekdays and takes the ferry at weekends.",
    ]
    await engram.update_admission_policy({"pii": "off"})
    await engram.remember_many([{"content": d} for d in docs + wanted])
    cfg = preset("hybrid", lexical_postings_budget=100)
    # From a tenant of four times the budget: a word past the budget is then a name, not a stop word.
    gate = lexical.TOGETHER_MIN_DOCS * cfg.lexical_postings_budget
    for n_docs in (LARGE, gate):
        (found,) = await lexical_contents(engram, cfg, "Where is Amara Silva's home?", n_docs=n_docs)
        assert sorted(found[:2]) == sorted(wanted)
        assert all(c.startswith("Amara") for c in found[2:])  # the rest: Amaras, by the word read whole
    (smaller,) = await lexical_contents(engram, cfg, "Where is Amara Silva's home?", n_docs=gate - 1)
    assert not set(smaller[:2]) & set(wanted)


async def pairs_of(engram: Engram, memory_id: object) -> set[str]:
    """A memory's name pairs among its postings (migration 0026)."""
    return {p for p in await postings_of(engram, memory_id) if "&" in p}


async def test_names_words_are_paired_in_their_memorys_postings(engram: Engram) -> None:
    # Every pair of a run of capitalised words (initials too), never across runs or sentences.
    await engram.update_admission_policy({"pii": "off"})
    m = await engram.remember("Marco V. Okafor met Amara Silva in New York. Okafor. Then Bruno left.")
    assert await pairs_of(engram, m.id) == {"marco&okafor", "marco&v", "okafor&v", "amara&silva", "new&york"}
    # An edit of the capitals alone leaves the search key as it was, but not the pairs.
    m = await engram.update(
        m.id, {"content": "Marco V. Okafor met amara silva in New York. Okafor. Then Bruno left."}, expected_revision=1
    )
    assert await pairs_of(engram, m.id) == {"marco&okafor", "marco&v", "okafor&v", "new&york"}
    await engram.update(m.id, {"content": "A note about the harbour, by Lena Ruiz."}, expected_revision=2)
    assert await pairs_of(engram, m.id) == {"lena&ruiz"}
    await engram.delete(m.id)
    assert await postings_of(engram, m.id) == set()


async def test_words_a_query_names_as_one_name_are_read_from_their_pair(engram: Engram) -> None:
    # "amara" and "silva" are both in 132 memories (over the budget of 100): in 130 of them as two people's
    # names, in two as one person's.
    docs = [f"Amara {chr(65 + n % 26)}. Okafor {n} met Bruno Silva at the harbour" for n in range(130)]
    wanted = ["Amara K. Silva lives in Osaka.", "Amara K. Silva drives a red Toyota."]
    await engram.update_admission_policy({"pii": "off"})
    await engram.remember_many([{"content": d} for d in docs + wanted])
    cfg = preset("hybrid", lexical_postings_budget=100)
    one, held = await lexical_contents(engram, cfg, "Where is Amara Silva's home?", "When did Amara meet Silva?")
    assert sorted(one) == sorted(wanted)
    # Named apart, the two words are read wherever they are: any memory holding both.
    assert len(held) == cfg.candidates and any("Okafor" in c for c in held)
