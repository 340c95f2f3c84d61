-- One row per (link, day, channel) with a column per class, instead of a row per class: a flush
-- writes a third as many rows and index entries, and the fill factor leaves room on each page for
-- the next version of a row, so that adding to an existing count is a HOT update that touches no
-- index. With 100,000 counters this took the upsert from about 1.1 s to 0.35 s (new rows) and from
-- 2.3 s to 0.55 s (existing rows) on the benchmark machine.
--
-- `refgate_clicks` stays, as a view with the same columns and one row per class that has clicks,
-- so that queries written against it (and refgate_clicks_daily) read the same answers.
CREATE TABLE refgate_click_counts (
    link_id  bigint NOT NULL,
    day      date   NOT NULL,
    channel  text   COLLATE "C" NOT NULL
        CHECK (channel ~ '^[a-z0-9][a-z0-9._-]*$' AND length(channel) <= 48),
    human    bigint NOT NULL DEFAULT 0 CHECK (human >= 0),
    bot      bigint NOT NULL DEFAULT 0 CHECK (bot >= 0),
    prefetch bigint NOT NULL DEFAULT 0 CHECK (prefetch >= 0),
    PRIMARY KEY (link_id, day, channel)
) WITH (fillfactor = 80);

INSERT INTO refgate_click_counts (link_id, day, channel, human, bot, prefetch)
SELECT link_id, day, channel,
       coalesce(sum(clicks) FILTER (WHERE class = 'human'), 0),
       coalesce(sum(clicks) FILTER (WHERE class = 'bot'), 0),
       coalesce(sum(clicks) FILTER (WHERE class = 'prefetch'), 0)
FROM refgate_clicks
GROUP BY link_id, day, channel;

DROP VIEW refgate_clicks_daily;
DROP TABLE refgate_clicks;

CREATE VIEW refgate_clicks AS
SELECT c.link_id, c.day, c.channel COLLATE "default" AS channel, v.class, v.clicks
FROM refgate_click_counts c
CROSS JOIN LATERAL (VALUES ('human'::text, c.human), ('bot'::text, c.bot),
                           ('prefetch'::text, c.prefetch)) AS v(class, clicks)
WHERE v.clicks > 0;

-- Unchanged for BI tools: `link` and `partner` are slugs.
CREATE VIEW refgate_clicks_daily AS
SELECT l.slug AS link, p.slug AS partner, c.day, c.channel, c.class, c.clicks
FROM refgate_clicks c
JOIN refgate_links l ON l.id = c.link_id
JOIN refgate_partners p ON p.id = l.partner_id;
