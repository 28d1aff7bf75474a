-- A small scope's vectors in one place (SPEC 5.1). Recall scores every vector of a user's scope exactly
-- (plan scope-exact, ``retrieval.retrievers.dense``); read through memory_embeddings_scope_owned, each of a
-- user's vectors sat on a heap page of its own (1,619 vectors on 1,573 pages for the largest user of a
-- 100,000-memory tenant), and at a million memories most of those pages were not in shared buffers. This
-- index carries the owned vectors themselves, in owner order, so that the scan is index-only: a user's
-- vectors lie together, five to a page.
--
-- A B-tree entry holds at most 2,704 bytes: the entries are bounded below that by what they carry (the
-- tenant is at most 128 bytes; the owner, the model and the vector are bounded together by the predicate).
-- A vector of a larger model, or an owner with a very long id, is left out and read as before: recall asks
-- for this index only when the caller's owners and the model fit (``dense.fits_compact``).
CREATE INDEX memory_embeddings_scope_vectors ON memory_embeddings (tenant_id, model_id, scope_owner)
    INCLUDE (memory_id, embedding)
    WHERE scope_owner IS NOT NULL
      AND octet_length(scope_owner) + octet_length(model_id) + 4 * vector_dims(embedding) <= 2400;
