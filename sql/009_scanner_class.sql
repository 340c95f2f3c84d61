-- The click class `scanner` (issue 20): clicks from e-mail security and cloud networks, and from a
-- client fetching many links of one channel within seconds. A column beside the other classes;
-- refgate_clicks lists it as a row with class 'scanner' (only where there are such clicks), so
-- refgate_clicks_daily and every query over them see it without a change of shape.
ALTER TABLE refgate_click_counts
    ADD COLUMN scanner bigint NOT NULL DEFAULT 0 CHECK (scanner >= 0);

CREATE OR REPLACE VIEW refgate_clicks AS
SELECT c.link_id, c.day, c.channel COLLATE "default" AS channel, v.class, v.clicks
FROM refgate_click_counts c
CROSS JOIN LATERAL (VALUES ('human'::text, c.human), ('bot'::text, c.bot),
                           ('prefetch'::text, c.prefetch), ('scanner'::text, c.scanner))
    AS v(class, clicks)
WHERE v.clicks > 0;
