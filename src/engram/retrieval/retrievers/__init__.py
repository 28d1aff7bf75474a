"""Recall's retrievers, one module each behind one small interface (``base.Retriever``): ``lexical`` (BM25F
over the postings), ``dense`` (the memory's own and context vectors), ``identifiers`` (exact tokens); and
the follow-up reads of a recall (``followups``). Every candidate statement returns the same typed rows
(``base.Row``, read through ``columns``)."""
