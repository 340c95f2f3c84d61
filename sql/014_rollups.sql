-- Roll-ups of the click counts (issue 41): the stats answers read these instead of scanning
-- refgate_click_counts, so that their cost does not grow with the days they summarise.
--
-- The flush writes them in the transaction that writes refgate_click_counts, from the same rows
-- (after the channel cap's fold), so a bucket applied once is rolled up once. The stats answers
-- read them only while refgate_rollup_state says they are complete; otherwise (being built after
-- this migration, or rebuilt after a write that did not maintain them) they read the base table
-- as before. No foreign keys, as for the base table: counts of a link deleted before its bucket
-- was flushed stay per link and are joined away.

-- Per link and day, every channel together: a link's days, and its totals over short ranges.
CREATE TABLE refgate_rollup_link_days (
    link_id  bigint NOT NULL,
    day      date   NOT NULL,
    human    bigint NOT NULL DEFAULT 0,
    bot      bigint NOT NULL DEFAULT 0,
    prefetch bigint NOT NULL DEFAULT 0,
    scanner  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (link_id, day)
) WITH (fillfactor = 80);
-- Every link's days of a range (top, a partner's links; rows of a day lie together), and which
-- links had clicks on the last days (the overview's unique estimates) from the index alone.
CREATE INDEX refgate_rollup_link_days_day_idx ON refgate_rollup_link_days (day, link_id);

-- Per link and calendar month (its first day): the whole months of a long range.
CREATE TABLE refgate_rollup_link_months (
    link_id  bigint NOT NULL,
    month    date   NOT NULL CHECK (extract(day FROM month) = 1),
    human    bigint NOT NULL DEFAULT 0,
    bot      bigint NOT NULL DEFAULT 0,
    prefetch bigint NOT NULL DEFAULT 0,
    scanner  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (link_id, month)
) WITH (fillfactor = 80);
CREATE INDEX refgate_rollup_link_months_month_idx ON refgate_rollup_link_months (month);

-- Per partner and day, over the partner's links as they are now: a link moved to another partner
-- takes its days along, a deleted link's days leave (the trigger below), as the views join them.
CREATE TABLE refgate_rollup_partner_days (
    partner_id bigint NOT NULL,
    day        date   NOT NULL,
    human      bigint NOT NULL DEFAULT 0,
    bot        bigint NOT NULL DEFAULT 0,
    prefetch   bigint NOT NULL DEFAULT 0,
    scanner    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (partner_id, day)
) WITH (fillfactor = 80);
CREATE INDEX refgate_rollup_partner_days_day_idx ON refgate_rollup_partner_days (day);

-- Per day and channel over every existing link (the overview's channels), for the days that
-- refgate_click_counts keeps (see base_from).
CREATE TABLE refgate_rollup_channel_days (
    day      date NOT NULL,
    channel  text COLLATE "C" NOT NULL,
    human    bigint NOT NULL DEFAULT 0,
    bot      bigint NOT NULL DEFAULT 0,
    prefetch bigint NOT NULL DEFAULT 0,
    scanner  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, channel)
) WITH (fillfactor = 80);

-- Per day, the sum of every existing link's unique estimate (refgate_uniques): the overview's.
CREATE TABLE refgate_rollup_unique_days (
    day             date   PRIMARY KEY,
    unique_estimate bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 80);

-- The overview reads the stored estimates of the last days (those Redis may hold newer ones of)
-- for every link; without this it read the whole table.
CREATE INDEX refgate_uniques_day_idx ON refgate_uniques (day);

-- One row. `complete`: every count is in the roll-ups. While not, the roll-ups hold the counts of
-- the links with id <= built_through, and the flush rolls up only those (the rest is built from
-- refgate_click_counts, a batch of links per transaction, by `refgate migrate` or the flusher).
-- `reset_pending`: something wrote the counts without the roll-ups (an older release during a
-- rolling upgrade, SQL by hand); they are built again. `base_from`: the first day that
-- refgate_click_counts keeps (REFGATE_STATS_RETENTION_DAYS; NULL: every day); its older rows are
-- being deleted for the links with id <= purged_through, and answers do not read them.
CREATE TABLE refgate_rollup_state (
    id             boolean PRIMARY KEY DEFAULT true CHECK (id),
    complete       boolean NOT NULL DEFAULT false,
    built_through  bigint  NOT NULL DEFAULT -1,
    reset_pending  boolean NOT NULL DEFAULT false,
    base_from      date,
    purged_through bigint  NOT NULL DEFAULT -1,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO refgate_rollup_state DEFAULT VALUES;

-- A writer of the counts that keeps the roll-ups sets refgate.rollups to 'on' for its
-- transaction; any other write means the roll-ups no longer match, and they are built again.
CREATE FUNCTION refgate_rollups_unmaintained() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('refgate.rollups', true) IS DISTINCT FROM 'on' THEN
        UPDATE refgate_rollup_state
        SET complete = false, built_through = -1, reset_pending = true, updated_at = now();
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER refgate_click_counts_unmaintained
    BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_click_counts
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_rollups_unmaintained();
CREATE TRIGGER refgate_uniques_unmaintained
    BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_uniques
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_rollups_unmaintained();

-- A link deleted or moved to another partner: the partner roll-up follows (and, for a deleted
-- link, the overview's channels and uniques), as the views that join links do. The lock
-- (8243107287174243635, "refgate3", taken shared by every flush transaction) keeps flushes out
-- until this transaction ends, so that none rolls up a count under the partner this replaces.
CREATE FUNCTION refgate_rollups_link_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    s refgate_rollup_state;
BEGIN
    PERFORM pg_advisory_xact_lock(8243107287174243635);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        -- Its snapshot predates the lock: a flush committed meanwhile would be missed. Rare (the
        -- service edits in read committed): the roll-ups are built again instead.
        UPDATE refgate_rollup_state
        SET complete = false, built_through = -1, reset_pending = true, updated_at = now();
        RETURN NULL;
    END IF;
    SELECT * INTO s FROM refgate_rollup_state;
    IF NOT s.complete AND OLD.id > s.built_through THEN
        RETURN NULL;  -- not rolled up yet: the build reads the links as they are then
    END IF;
    INSERT INTO refgate_rollup_partner_days AS t (partner_id, day, human, bot, prefetch, scanner)
    SELECT OLD.partner_id, day, -human, -bot, -prefetch, -scanner
    FROM refgate_rollup_link_days WHERE link_id = OLD.id
    ON CONFLICT (partner_id, day) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO refgate_rollup_partner_days AS t (partner_id, day, human, bot, prefetch, scanner)
        SELECT NEW.partner_id, day, human, bot, prefetch, scanner
        FROM refgate_rollup_link_days WHERE link_id = OLD.id
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

CREATE TRIGGER refgate_links_rollups_deleted
    AFTER DELETE ON refgate_links
    FOR EACH ROW EXECUTE FUNCTION refgate_rollups_link_changed();
CREATE TRIGGER refgate_links_rollups_moved
    AFTER UPDATE OF partner_id ON refgate_links
    FOR EACH ROW WHEN (OLD.partner_id IS DISTINCT FROM NEW.partner_id)
    EXECUTE FUNCTION refgate_rollups_link_changed();

-- For BI tools: every day the roll-ups keep, also those older than REFGATE_STATS_RETENTION_DAYS
-- (which refgate_clicks_daily no longer lists), without the channel; a row per class with clicks.
CREATE VIEW refgate_clicks_daily_totals AS
SELECT l.slug AS link, p.slug AS partner, r.day, v.class, v.clicks
FROM refgate_rollup_link_days r
JOIN refgate_links l ON l.id = r.link_id
JOIN refgate_partners p ON p.id = l.partner_id
CROSS JOIN LATERAL (VALUES ('human'::text, r.human), ('bot'::text, r.bot),
                           ('prefetch'::text, r.prefetch), ('scanner'::text, r.scanner))
    AS v(class, clicks)
WHERE v.clicks > 0;
