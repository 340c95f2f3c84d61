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
