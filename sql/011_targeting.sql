-- Targeting rules (issue 19): a link's rules in the import format's shape (a JSON list, checked
-- by refgate on every save and again by every snapshot build), and the partner families' country
-- fallbacks. Both are part of the snapshot: a change bumps its version and NOTIFYs.
ALTER TABLE refgate_links ADD COLUMN rules jsonb NOT NULL DEFAULT '[]'
    CHECK (jsonb_typeof(rules) = 'array');

-- A partner family is a slug prefix: the group "amazon" applies to partners "amazon" and
-- "amazon-*". fallbacks: {"AT": "DE", "NZ": "AU"}.
CREATE TABLE refgate_country_groups (
    family     text PRIMARY KEY CHECK (family ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    fallbacks  jsonb NOT NULL CHECK (jsonb_typeof(fallbacks) = 'object'),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER refgate_country_groups_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_country_groups
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();

-- Clicks per (link, UTC day, country, rule), only where a country database is configured: an
-- aggregate that states no more than a country. `rule` says which branch answered: '0' the link's
-- own destination, '3' its third rule, '4.2' the second branch of its fourth rule's split;
-- country 'XX' when the address has none.
CREATE TABLE refgate_click_counts_by_country (
    link_id  bigint NOT NULL,
    day      date   NOT NULL,
    country  text   COLLATE "C" NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    rule     text   COLLATE "C" NOT NULL CHECK (rule ~ '^[0-9]{1,3}(\.[1-9][0-9]{0,2})?$'),
    human    bigint NOT NULL DEFAULT 0 CHECK (human >= 0),
    bot      bigint NOT NULL DEFAULT 0 CHECK (bot >= 0),
    prefetch bigint NOT NULL DEFAULT 0 CHECK (prefetch >= 0),
    scanner  bigint NOT NULL DEFAULT 0 CHECK (scanner >= 0),
    PRIMARY KEY (link_id, day, country, rule)
) WITH (fillfactor = 80);

-- For BI tools, like refgate_clicks_daily: `link` and `partner` are slugs, a row per class with
-- clicks.
CREATE VIEW refgate_clicks_by_country_daily AS
SELECT l.slug AS link, p.slug AS partner, c.day, c.country COLLATE "default" AS country,
       c.rule COLLATE "default" AS rule, v.class, v.clicks
FROM refgate_click_counts_by_country c
JOIN refgate_links l ON l.id = c.link_id
JOIN refgate_partners p ON p.id = l.partner_id
CROSS JOIN LATERAL (VALUES ('human'::text, c.human), ('bot'::text, c.bot),
                           ('prefetch'::text, c.prefetch), ('scanner'::text, c.scanner))
    AS v(class, clicks)
WHERE v.clicks > 0;
