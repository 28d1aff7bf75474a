-- A receipt (about 6.7 KB of JSON) is stored whole in its row, uncompressed. Past the default 2 KB target
-- PostgreSQL compressed its JSON columns with pglz on every insert, which the server did beside the recalls
-- that followed: recall p95 of the users bench 4.2 ms against 4.6 ms with them compressed (docs/performance.md).
-- Rows are about 60% larger (8.3 KB against 5.0 KB).
ALTER TABLE recall_receipts SET (toast_tuple_target = 8160);
