-- Month sums only for months that have ended (issue 41): the flush writes a link's day sum and no
-- longer its month sum, which was half of its roll-up writes (the current month's row changed
-- with every bucket). The answers read the month sums of the months before `months_through` and
-- the link days of the others (the current month: at most 31 a link).
--
-- `months_through`: refgate_rollup_link_months holds, for every link rolled up, the sums of the
-- months before it; the flush adds a late bucket's counts of those months to them. Once the UTC
-- month after it has begun, the upkeep closes it (refgate_rollup_link_days -> one row a link, a
-- batch of links per transaction, as the build: links up to `months_closed_through` are done and
-- the flush keeps their row of that month too) and moves `months_through` on by a month. A reset
-- of the roll-ups starts the closing over.
ALTER TABLE refgate_rollup_state
    ADD COLUMN months_through date,
    ADD COLUMN months_closed_through bigint NOT NULL DEFAULT -1;
UPDATE refgate_rollup_state
SET months_through = date_trunc('month', now() AT TIME ZONE 'UTC')::date;
ALTER TABLE refgate_rollup_state
    ALTER COLUMN months_through SET NOT NULL,
    ADD CHECK (extract(day FROM months_through) = 1);

-- The current month's sums that the flush kept until now are no longer kept: they go (an older
-- release still flushing during a rolling upgrade may write them again; nothing reads them, and
-- the month's closing replaces them).
DELETE FROM refgate_rollup_link_months
WHERE month >= (SELECT months_through FROM refgate_rollup_state);
