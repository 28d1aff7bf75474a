-- A receipt (a few KB of JSON) is stored whole in its row, uncompressed: past the default 2 KB target
-- PostgreSQL compressed its JSON columns with pglz on every insert, server work done beside the recalls that
-- followed (docs/retrieval.md, "Packet and receipts"). A receipt over 8 KB still has its largest column
-- compressed to fit its page.
ALTER TABLE recall_receipts SET (toast_tuple_target = 8160);
