-- Every recall writes a receipt. With GIN's pending list (fastupdate), one unlucky insert pays for merging
-- megabytes of them into the index (a 190 ms recall in `engram bench recall`); updated directly, each
-- insert pays a little and none pays a lot.
ALTER INDEX recall_receipts_selected SET (fastupdate = off);
SELECT gin_clean_pending_list('recall_receipts_selected');
