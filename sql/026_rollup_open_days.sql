-- Link days only of days that have ended (issue 41): the flush no longer writes a link's day sum
-- of the open day, which was most of what the roll-ups added to a flush (a row per link and day
-- upserted into a table with two indexes, for buckets of mostly distinct links). The answers read
-- the days from `days_through` on (the current UTC day) from refgate_click_counts, a probe of its
-- primary key per link, and the days before it from refgate_rollup_link_days. The partner, channel
-- and unique sums stay written by every flush.
--
-- `days_through`: refgate_rollup_link_days holds, for every link rolled up, the sums of the days
-- before it, and the flush adds a late bucket's counts of those days to them (in the bucket's own
-- transaction, so a bucket is still rolled up once). Once the UTC day after it has begun, the
-- upkeep closes it (refgate_click_counts -> one row a link, a batch of links per transaction, as
-- the build: links up to `days_closed_through` are done and the flush keeps their row of that day
-- too) and moves `days_through` on by a day. Rows of refgate_rollup_link_days from `days_through`
-- on are not read (they may be stale: the closing replaces them). A month is closed into its month
-- sums only once its last day is closed (months_through <= days_through).
--
-- Nothing is rebuilt here: until now the flush wrote the link days of every day, so they hold
-- every day up to today, and `days_through` starts at tomorrow; the schema change alone is quick.
ALTER TABLE refgate_rollup_state
    ADD COLUMN days_through date,
    ADD COLUMN days_closed_through bigint NOT NULL DEFAULT -1;
UPDATE refgate_rollup_state SET days_through = (now() AT TIME ZONE 'UTC')::date + 1;
ALTER TABLE refgate_rollup_state ALTER COLUMN days_through SET NOT NULL;

-- Per existing link and day, every day: the closed days from refgate_rollup_link_days, the open
-- ones summed from refgate_click_counts (a probe per link: the base table has no index by day).
-- A condition on link_id reaches both parts, one on day the open part's probes.
CREATE VIEW refgate_link_day_sums AS
SELECT r.link_id, r.day, r.human, r.bot, r.prefetch, r.scanner
FROM refgate_rollup_link_days r
WHERE r.day < (SELECT days_through FROM refgate_rollup_state)
UNION ALL
SELECT l.id AS link_id, c.day, c.human, c.bot, c.prefetch, c.scanner
FROM refgate_links l
CROSS JOIN LATERAL (
    SELECT day, sum(human)::bigint AS human, sum(bot)::bigint AS bot,
           sum(prefetch)::bigint AS prefetch, sum(scanner)::bigint AS scanner
    FROM refgate_click_counts
    WHERE link_id = l.id AND day >= (SELECT days_through FROM refgate_rollup_state)
    GROUP BY day) c;

-- For BI tools: as before, every day the roll-ups keep, now with the open days from the base table.
CREATE OR REPLACE VIEW refgate_clicks_daily_totals AS
SELECT l.slug AS link, p.slug AS partner, r.day, v.class, v.clicks
FROM refgate_link_day_sums r
JOIN refgate_links l ON l.id = r.link_id
JOIN refgate_partners p ON p.id = l.partner_id
CROSS JOIN LATERAL (VALUES ('human'::text, r.human), ('bot'::text, r.bot),
                           ('prefetch'::text, r.prefetch), ('scanner'::text, r.scanner))
    AS v(class, clicks)
WHERE v.clicks > 0;

-- A link deleted or moved: as in 014, with the link's open days read from the base table.
CREATE OR REPLACE FUNCTION refgate_rollups_link_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    s refgate_rollup_state;
BEGIN
    PERFORM pg_advisory_xact_lock(8243107287174243635);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        UPDATE refgate_rollup_state
        SET complete = false, built_through = -1, reset_pending = true, updated_at = now();
        RETURN NULL;
    END IF;
    SELECT * INTO s FROM refgate_rollup_state;
    IF NOT s.complete AND OLD.id > s.built_through THEN
        RETURN NULL;
    END IF;
    INSERT INTO refgate_rollup_partner_days AS t (partner_id, day, human, bot, prefetch, scanner)
    SELECT OLD.partner_id, d.day, -d.human, -d.bot, -d.prefetch, -d.scanner
    FROM (SELECT day, human, bot, prefetch, scanner FROM refgate_rollup_link_days
          WHERE link_id = OLD.id AND day < s.days_through
          UNION ALL
          SELECT day, sum(human), sum(bot), sum(prefetch), sum(scanner) FROM refgate_click_counts
          WHERE link_id = OLD.id AND day >= s.days_through GROUP BY day) d
    ON CONFLICT (partner_id, day) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO refgate_rollup_partner_days AS t (partner_id, day, human, bot, prefetch, scanner)
        SELECT NEW.partner_id, d.day, d.human, d.bot, d.prefetch, d.scanner
        FROM (SELECT day, human, bot, prefetch, scanner FROM refgate_rollup_link_days
              WHERE link_id = OLD.id AND day < s.days_through
              UNION ALL
              SELECT day, sum(human), sum(bot), sum(prefetch), sum(scanner)
              FROM refgate_click_counts
              WHERE link_id = OLD.id AND day >= s.days_through GROUP BY day) d
        ON CONFLICT (partner_id, day) DO UPDATE
        SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
            prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner;
        RETURN NULL;
    END IF;
    INSERT INTO refgate_rollup_channel_days AS t (day, channel, human, bot, prefetch, scanner)
    SELECT day, channel, -human, -bot, -prefetch, -scanner
    FROM refgate_click_counts
    WHERE link_id = OLD.id AND (s.base_from IS NULL OR day >= s.base_from)
    ON CONFLICT (day, channel) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner;
    INSERT INTO refgate_rollup_unique_days AS t (day, unique_estimate)
    SELECT day, -unique_estimate FROM refgate_uniques WHERE link_id = OLD.id
    ON CONFLICT (day) DO UPDATE SET unique_estimate = t.unique_estimate + EXCLUDED.unique_estimate;
    RETURN NULL;
END;
$$;
