-- Click counts. Nothing about a reader is stored: a count per (link, UTC day, channel, class) and
-- a unique-click estimate per (link, day). No foreign keys to links: a count that arrives after
-- its link was deleted must not make a whole flush fail; the views join it away.

CREATE TABLE refgate_clicks (
    link_id bigint NOT NULL,
    day     date   NOT NULL,
    channel text   NOT NULL CHECK (channel ~ '^[a-z0-9][a-z0-9._-]{0,47}$'),
    class   text   NOT NULL CHECK (class IN ('human', 'bot', 'prefetch')),
    clicks  bigint NOT NULL CHECK (clicks >= 0),
    PRIMARY KEY (link_id, day, channel, class)
);

CREATE TABLE refgate_uniques (
    link_id         bigint NOT NULL,
    day             date   NOT NULL,
    unique_estimate bigint NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (link_id, day)
);

-- Every Redis bucket applied, recorded in the same transaction as its counts: a bucket is never
-- applied twice, even when Redis brings it back after a crash.
CREATE TABLE refgate_flushed_buckets (
    bucket     bigint PRIMARY KEY,
    counters   integer NOT NULL,
    clicks     bigint NOT NULL,
    flushed_at timestamptz NOT NULL DEFAULT now()
);

-- The per-field counts of buckets flushed before their time span ended (`refgate flush` closes
-- the current bucket). Should Redis lose that close in its fsync window, new clicks land in the
-- same bucket id again; only what exceeds these counts is then applied. Kept for a day.
CREATE TABLE refgate_early_bucket_fields (
    bucket bigint NOT NULL,
    field  text   NOT NULL,
    clicks bigint NOT NULL,
    PRIMARY KEY (bucket, field)
);

-- Stable views for BI tools that read PostgreSQL directly; `link` and `partner` are slugs.
CREATE VIEW refgate_clicks_daily AS
SELECT l.slug AS link, p.slug AS partner, c.day, c.channel, c.class, c.clicks
FROM refgate_clicks c
JOIN refgate_links l ON l.id = c.link_id
JOIN refgate_partners p ON p.id = l.partner_id;

CREATE VIEW refgate_uniques_daily AS
SELECT l.slug AS link, u.day, u.unique_estimate
FROM refgate_uniques u
JOIN refgate_links l ON l.id = u.link_id;
