-- Recall counts every use of a memory (last_used_at, use_count: about once a second, for every memory it
-- returned). With full pages, about a third of those updates could not stay on the row's page: each then
-- inserted a new entry in every index of `memories`, the GIN indexes over trigrams and search keys among
-- them. On the bench database, 1,000 counts cost the server 87-132 ms and 2.7-19 MB of WAL. With 15% of
-- each page left free, nearly all stay on their page as HOT updates: 41-45 ms and about 0.2 MB.
-- Pages written from now on keep the space; existing ones as they are rewritten (VACUUM FULL, CLUSTER).
ALTER TABLE memories SET (fillfactor = 85);
