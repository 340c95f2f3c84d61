-- Click caps (issue 44). A link may set max_human_clicks (null: no cap): once the fleet's human
-- clicks on it (flushed plus still in Redis) reach it, the link answers like an expired one (its
-- fallback or 410). Every instance's cap worker counts the capped links each second; the column
-- only travels with the snapshot.

ALTER TABLE refgate_links ADD COLUMN max_human_clicks bigint;
-- Every existing row has max_human_clicks null: nothing to scan.
ALTER TABLE refgate_links ADD CONSTRAINT refgate_links_max_human_clicks_check
    CHECK (max_human_clicks IS NULL OR max_human_clicks > 0) NOT VALID;
