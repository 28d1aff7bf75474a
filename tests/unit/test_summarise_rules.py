"""The extractive summariser (SPEC 6.2): statements that carry something are kept, filler is dropped, and
every candidate names the turn it comes from."""

from __future__ import annotations

from engram.lifecycle.summarise import Turn, condense, condense_turn, tighten


def test_keeps_facts_preferences_decisions_and_failures() -> None:
    turns = [
        Turn("t1", "Caroline", "Hey Mel! Wow, that's so cool!!"),
        Turn("t2", "Melanie", "I went to the pottery class on Sunday and made a blue bowl."),
        Turn("t3", "Caroline", "Thanks!"),
        Turn("t4", "Melanie", "How was your week?"),
        Turn("t5", "Caroline", "I decided to apply to the adoption agency in Boston next month."),
        Turn("t6", "Melanie", "The deploy failed twice because the migration locked the memories table."),
        Turn("t7", "Caroline", "I really prefer tea over coffee in the mornings, you know."),
    ]
    out = condense(turns)
    assert [c.ref for c in out] == ["t2", "t5", "t6", "t7"]
    assert out[0].content == "Melanie: I went to the pottery class on Sunday and made a blue bowl."
    assert out[3].content == "Caroline: I prefer tea over coffee in the mornings."
    assert all(c.content.split(": ", 1)[0] in ("Caroline", "Melanie") for c in out)


def test_a_long_turn_keeps_its_heaviest_statement_only() -> None:
    turn = Turn("x", "Ann", "Haha yes. I moved to Lisbon in 2021 for a job at Feedzai. It was fun, honestly.")
    kept = condense_turn(turn)
    assert kept is not None and kept.content == "Ann: I moved to Lisbon in 2021 for a job at Feedzai."
    assert condense_turn(Turn("y", "Ann", "Okay! Sounds great!")) is None
    assert condense([]) == []


def test_tighten_drops_emphasis_and_hedges() -> None:
    assert tighten("It was really so amazing!!! 🎉") == "It was amazing!"
    assert tighten("[photo: a photo of a dog on a couch]") == "[photo: dog on a couch]"
